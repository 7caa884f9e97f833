# SPDX-License-Identifier: GPL-2.0
# The chart of `make bench` (called by bench/report.sh with dir, title, rtt,
# runs, secs, rmem, calls set, and tput and cost 1 where that part has
# data): throughput per case, median with the range of the rounds, and the
# setsockopt() cost per setup as a ratio to no module.

set terminal pngcairo size 1400,1000 font "DejaVu Sans,11" noenhanced
set output dir."/bench.png"
set multiplot layout (tput + cost > 1 ? 2 : 1),1 title title font ",14"

set style fill solid 0.85 border -1
set grid ytics lc rgb "#dddddd"
set key off
set border 3
set xtics nomirror scale 0
set bmargin 4
set ytics nomirror

if (tput) {
# --- throughput ----------------------------------------------------------------
set title sprintf("Throughput, receiver tcp_rmem \"%s\", ping RTT min/avg %s ms: median, range of %s rounds of %s s (TCG guest);\nin brackets: median of each round's ratio to case 1", rmem, rtt, runs, secs)
set ylabel "Mbit/s"
set boxwidth 0.6
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.1, 0
set xrange [*:*]
colour(c) = (c == 1 ? 0x4c72b0 : c == 2 ? 0xc44e52 : c == 3 ? 0x55a868 : 0x8172b2)
plot dir."/tput.dat" using 1:3:(colour($6)):xtic(2) with boxes lc rgb variable, \
     "" using 1:3:4:5 with yerrorbars lc rgb "black" pt -1 lw 1.5, \
     "" using 1:5:(strcol(7) eq "-" ? sprintf("%.1f", $3) : sprintf("%.1f (%.2fx)", $3, $7)) with labels offset 0,1 font ",11"

}

if (cost) {
# --- hook cost -----------------------------------------------------------------
set title sprintf("setsockopt() cost in guest instructions per call (QEMU -icount shift=0, %s calls), as a ratio to no module", calls)
set ylabel "x no module"
set boxwidth 0.25
set yrange [0.8:*]
set offsets 0.5, 0.5, 0.15, 0
set key top left horizontal
set arrow 1 from graph 0, first 1.15 to graph 1, first 1.15 nohead dt 2 lw 2 lc rgb "#c44e52"
set label 1 "target 1.15x" at graph 0.995, first 1.15 right offset 0,0.7 tc rgb "#c44e52"
plot dir."/cost.dat" using ($1 - 0.25):3:xtic(2) with boxes lc rgb "#4c72b0" title "SO_RCVBUF 425984 (not locked by rcvfix)", \
     "" using ($1):5 with boxes lc rgb "#dd8452" title "SO_RCVBUF 65536 (locked)", \
     "" using ($1 + 0.25):7 with boxes lc rgb "#55a868" title "SO_KEEPALIVE", \
     "" using ($1 - 0.25):3:(sprintf("%.0f", $4)) with labels offset 0,0.8 font ",9" notitle, \
     "" using ($1):5:(sprintf("%.0f", $6)) with labels offset 0,0.8 font ",9" notitle, \
     "" using ($1 + 0.25):7:(sprintf("%.0f", $8)) with labels offset 0,0.8 font ",9" notitle
}
unset multiplot
