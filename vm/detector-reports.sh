# SPDX-License-Identifier: GPL-2.0
# Counts the reports of the kernel's bug detectors in a guest's console log,
# by detector: what `make check-debug` (vm/check-debug.sh) prints and what
# vm.sh writes into a guest's summary. A report is counted once: the
# "WARNING: CPU:" line a WARN() prints right after a detector's own message
# (ODEBUG, list debugging, lockdep's DEBUG_LOCKS_WARN_ON) is part of it.
# Sourced on the host by vm.sh and check-debug.sh; not executable.
# shellcheck shell=bash

# The detectors, as "name<TAB>extended regular expression of a report's
# first line", in the order they are printed.
RCVFIX_DETECTORS=$(cat <<-'EOF'
	KASAN	BUG: KASAN: 
	KFENCE	BUG: KFENCE: 
	lockdep	WARNING: (possible (circular|recursive) locking|inconsistent lock state|bad unlock balance|held lock freed|lock held when returning|Nested lock was not taken|possible irq lock inversion|[A-Z]+-(safe|unsafe) lock order)|BUG: (held lock freed|looking up invalid subclass|MAX_LOCKDEP)|DEBUG_LOCKS_WARN_ON
	RCU	suspicious RCU usage|context switch within RCU read-side|RCU stall|rcu_(sched|preempt|bh) (self-)?detected stall|detected stalls on CPU
	atomic-sleep	BUG: (sleeping function called from invalid context|scheduling while atomic)
	ODEBUG	ODEBUG: 
	list	list_(add|del) (corruption|double add)
	other	WARNING: CPU:|Oops|general protection|kernel BUG at|UBSAN:|soft lockup|hard LOCKUP|refcount_t: |Kernel panic
EOF
)

# detector_reports CONSOLE: "NAME COUNT" for each detector with reports,
# then "total N" (always).
detector_reports() {
	awk -v spec="$RCVFIX_DETECTORS" '
		BEGIN {
			n = split(spec, lines, "\n")
			for (i = 1; i <= n; i++) {
				split(lines[i], f, "\t")
				sub(/^[ \t]+/, "", f[1])
				name[i] = f[1]; re[i] = f[2]
			}
			last = -100
		}
		{
			sub(/\r$/, "")
			for (i = 1; i <= n; i++) {
				if ($0 !~ re[i])
					continue
				# the WARN() of a report that began with its
				# own line just before: the same report
				if (name[i] == "other" && /WARNING: CPU:/ && NR - last <= 2)
					break
				count[name[i]]++
				total++
				if (/ODEBUG: |list_(add|del) |DEBUG_LOCKS_WARN_ON|within RCU read-side/)
					last = NR
				break
			}
		}
		END {
			for (i = 1; i <= n; i++)
				if (count[name[i]])
					print name[i], count[name[i]]
			print "total", total + 0
		}' "$1"
}

# detector_summary CONSOLE: "0", or "N (KASAN 2, lockdep 1)"
detector_summary() {
	detector_reports "$1" | awk '
		$1 == "total" { t = $2; next }
		{ s = s (s == "" ? "" : ", ") $1 " " $2 }
		END { print t (t ? " (" s ")" : "") }'
}
