# Sourced by the guest's run.sh and bench.sh of each library.
#
# centis: the uptime in hundredths of a second, as a decimal number
# without leading zeros.  /proc/uptime reads "0.98" in the first second:
# pasted together as "098", $((...)) would take it for octal and fail,
# and a run that began before the guest's first second would then lose
# its end marker.
centis() {
	read -r up _ </proc/uptime
	echo $((${up%.*} * 100 + 1${up#*.} - 100))
}
