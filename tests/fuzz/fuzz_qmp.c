// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the QMP input path: arbitrary bytes go through the
 * session's framing, parser, envelope checks, argument schema and command
 * handlers over the fake VM, in chunks whose sizes the input also picks (so
 * split requests are explored), with no sockets. After every chunk it checks
 * that each output line is one JSON object of valid UTF-8 ending in '\n',
 * and that the fake VM only ever holds values the schema allows.
 *
 * Input: byte 0 picks the chunk size (1..64) and whether the session starts
 * negotiated; the rest is the client's byte stream.
 */
#include "tests/fuzz/fuzz.h"
#include "tests/lib/qmp_fake_vm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF), checked by code points: what the server echoes (ids, quoted
 * input in a desc) must stay valid JSON text for any client.
 */
static bool valid_utf8(const unsigned char *p, size_t len)
{
	static const uint32_t min_for_len[] = { 0, 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < len;) {
		size_t n = p[i] < 0x80 ? 1 : (p[i] & 0xe0) == 0xc0 ? 2 : (p[i] & 0xf0) == 0xe0 ? 3 :
			   (p[i] & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 1 ? p[i] : n ? p[i] & (0x7f >> n) : 0;

		if (!n || i + n > len)
			return false;
		for (size_t k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min_for_len[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

static void check_line(void *opaque, const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *obj;

	(void)opaque;
	if (!len || line[len - 1] != '\n' || memchr(line, '\n', len - 1) || memchr(line, '\0', len))
		abort();
	if (!valid_utf8((const unsigned char *)line, len))
		abort();
	/* The line is not NUL-terminated: parse exactly len - 1 bytes. */
	obj = json_tokener_parse_ex(tok, line, (int)len - 1);
	if (!obj || !json_object_is_type(obj, json_type_object) ||
	    json_tokener_get_parse_end(tok) != len - 1)
		abort();
	json_object_put(obj);
	json_tokener_free(tok);
}

static void check_vm(const struct fake_vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		const struct qmp_vcpu_info *v = &vm->vcpu[i];
		const struct qmp_reservation *r = &v->reservation;

		if (v->weight < QMP_WEIGHT_MIN || v->weight > QMP_WEIGHT_MAX ||
		    v->uclamp_min > v->uclamp_max || v->uclamp_max > QMP_UCLAMP_MAX)
			abort();
		if (v->has_reservation && (r->runtime_us < 1 || r->runtime_us > r->deadline_us ||
					   r->deadline_us > r->period_us ||
					   r->period_us > QMP_RES_PERIOD_MAX_US))
			abort();
	}
}

static void emit(void *opaque, const char *name, json_object *data)
{
	qmp_session_event(opaque, name, data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char caps[] = "{\"execute\":\"qmp_capabilities\"}\n";
	struct fake_vm vm;
	struct qmp_session *s;
	size_t chunk;

	if (!size)
		return 0;
	chunk = (size_t)(data[0] & 63) + 1;
	fake_vm_init(&vm, 4);
	s = qmp_session_new(&fake_vm_ops, &vm, check_line, NULL, NULL, NULL);
	vm.emit = emit;
	vm.emit_opaque = s;
	qmp_session_greet(s);
	if (data[0] & 64)
		qmp_session_feed(s, caps, sizeof(caps) - 1);
	for (size_t off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		qmp_session_feed(s, (const char *)data + off, n);
		check_vm(&vm);
	}
	qmp_session_free(s);
	return 0;
}
