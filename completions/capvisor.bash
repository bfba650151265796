# SPDX-License-Identifier: MIT
# bash completion for capvisor. Commands and options are read from the
# binary's own help (`capvisor help`, `capvisor COMMAND --help`), so this
# file never lists them and cannot drift from them. ctl completes the
# commands a live socket offers (query-commands).

# The commands, from the "commands:" section of `capvisor help`.
_capvisor_commands()
{
	"$1" help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

# A command's options: those of its usage line and of its option list
# (lines that start with "  --"), and --help, -h, --version of every command.
_capvisor_options()
{
	{
		"$1" "$2" --help 2>/dev/null | awk '/^usage:/ || /^  --/' | grep -oE -- '--[a-z][a-z-]*'
		printf '%s\n' --help -h --version
	} | sort -u
}

_capvisor()
{
	local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd=${COMP_WORDS[1]:-} IFS=$'\n'

	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$(_capvisor_commands "$bin")"$'\n'"--help"$'\n'"--version" -- "$cur"))
		return
	fi
	case $cmd in
	help)
		((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$(_capvisor_commands "$bin")" -- "$cur"))
		return ;;
	run)
		case $prev in
		--kernel | --initrd | --config | --stats-json | --api-socket)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--dump-acpi)
			COMPREPLY=($(compgen -d -- "$cur")); return ;;
		--sched)
			COMPREPLY=($(compgen -W $'capvisor\nhost' -- "$cur")); return ;;
		--seccomp)
			COMPREPLY=($(compgen -W $'kill\ntrap\nlog\noff' -- "$cur")); return ;;
		--console)
			COMPREPLY=($(compgen -W $'stdio\nfile:' -- "$cur"))
			[[ $cur == file:* ]] && COMPREPLY=($(compgen -P file: -f -- "${cur#file:}"))
			compopt -o nospace 2>/dev/null
			return ;;
		--user)
			COMPREPLY=($(compgen -u -- "$cur")); return ;;
		esac ;;
	sim)
		case $prev in
		--out | --trace)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		esac
		if [[ $cur != -* ]]; then
			COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
			return
		fi ;;
	ctl | top)
		if [[ $cur != -* ]]; then
			if ((COMP_CWORD == 2)); then
				COMPREPLY=($(compgen -f -- "$cur"))
			elif [[ $cmd == ctl ]] && ((COMP_CWORD == 3)) && [[ -S ${COMP_WORDS[2]} ]]; then
				COMPREPLY=($(compgen -W "$(timeout 2 "$bin" ctl "${COMP_WORDS[2]}" query-commands 2>/dev/null)" -- "$cur"))
			fi
			return
		fi ;;
	*)
		return ;;
	esac
	[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$(_capvisor_options "$bin" "$cmd")" -- "$cur"))
}

complete -F _capvisor capvisor
