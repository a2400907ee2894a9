#!/bin/bash
# make peers: the event libraries' own test suites on kevent.
#
#   scripts/peers.sh [LIBRARY] [build|initramfs|boot|report|all]
#
# LIBRARY is libevent (the default) or libuv.  Unpacks the library's
# release from ${PEERS:-../shared/peers}, copies in its kevent backend
# (testsuite/peers/LIBRARY/kevent.c), applies
# testsuite/peers/LIBRARY/LIBRARY-kevent.patch, builds it statically with
# the library's own CMake build, packs the test programs into an
# initramfs and boots the guest once.  The guest runs the tests with the
# kevent backend forced and with epoll (testsuite/peers/LIBRARY/run.sh),
# then the library's benchmarks (testsuite/peers/LIBRARY/bench.sh):
# libevent's for kevent, epoll and poll, libuv's for kevent and epoll.
# The report (testsuite/peers/report.py) prints passed/failed/skipped per
# program for both backends and fails if kevent fails a test that epoll
# passes.
#
#   libevent  2.1.12-stable: the regression programs and regress
#             (doc/libevent.md); build folder $BUILD/peers
#   libuv     v1.44.2: uv_run_tests_a, every test of test/test-list.h,
#             each in a process of its own (doc/libuv.md); build folder
#             $BUILD/peers-libuv
#
# Environment:
#   PEERS            where the tarball is (default ../shared/peers, and
#                    /work/shared/peers)
#   PEERS_BENCH=0    skip the benchmarks (make check does)
#   PEERS_MODES      also run libevent's regression programs with these
#                    modes of the backend: kevent-ring, kevent-poll
#   PEERS_TESTS      libuv: these tests only (names of test-list.h)
#   PEERS_BENCH_RUNS libuv: runs of each benchmark per backend (3)
#   PEERS_TIME_LIMIT the limit of the boot, in seconds (default 3000)
#   KERNEL, BUILD    as for scripts/boot.sh
# Exit status: 0 when kevent passed what epoll passed, 2 when the tarball
# is missing (the caller says "skipped"), 1 otherwise.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
export BUILD=$build
case "${1:-}" in
libevent|libuv) lib=$1; shift ;;
*) lib=libevent ;;
esac
peers_src=$top/testsuite/peers/$lib
case "$lib" in
libevent)
	out=$build/peers
	version=libevent-2.1.12-stable
	sha256=fa647e8ccd6b833bb02c62d9125422f74cbfdf73ad2dd12f8915f644b0ff2b9a
	backend_dest=kevent.c ;;
libuv)
	out=$build/peers-libuv
	version=libuv-v1.44.2
	sha256=ccfcdc968c55673c6526d8270a9c8655a806ea92468afcbcabc2b16040f03cb4
	backend_dest=src/unix/kevent.c ;;
esac
what=${1:-all}

find_tarball() {
	local d
	for d in ${PEERS:-} "$top/../shared/peers" /work/shared/peers; do
		if [ -f "$d/$version.tar.gz" ]; then
			echo "$d/$version.tar.gz"
			return 0
		fi
	done
	return 1
}

tarball=$(find_tarball) || {
	echo "peers: $version.tar.gz not found in ${PEERS:-../shared/peers}: skipped" >&2
	exit 2
}

log() { printf 'peers: %s\n' "$*" >&2; }

# One run at a time in this build folder (make check and make peers
# share it): a second one waits for the first.
mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
	log "another run of scripts/peers.sh holds $out; waiting"
	flock 9
fi

# Unpack and patch when the tarball or the patch changed; copy in the
# backend when it changed (make then rebuilds that file alone).
unpack() {
	local src=$out/src/$version obj=$out/obj stamp
	stamp=$(cat "$tarball" "$peers_src/$lib-kevent.patch" |
		sha256sum | cut -c1-16)
	if [ ! -f "$out/src/stamp" ] || [ "$(cat "$out/src/stamp")" != "$stamp" ]; then
		log "unpacking $(basename "$tarball")"
		echo "$sha256  $tarball" | sha256sum -c --quiet - ||
			{ log "checksum mismatch: $tarball"; exit 1; }
		rm -rf "$out/src" "$obj"
		mkdir -p "$out/src"
		tar xzf "$tarball" -C "$out/src"
		patch -s -p1 -d "$src" <"$peers_src/$lib-kevent.patch"
		echo "$stamp" >"$out/src/stamp"
	fi
	cmp -s "$peers_src/kevent.c" "$src/$backend_dest" ||
		cp "$peers_src/kevent.c" "$src/$backend_dest"
}

# cmake in $out/obj, once, with the library's options ($2...), and the
# kevent headers of this tree; the build must take the backend.
configure() {
	local what=$1
	shift
	[ ! -f "$out/obj/CMakeCache.txt" ] || return 0
	log "configuring (cmake, $what)"
	mkdir -p "$out/obj"
	(cd "$out/obj" && cmake -S "$out/src/$version" -B . \
		-DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_FLAGS="-O2 -g" \
		"$@" \
		-DKEVENT_INCLUDE_DIR="$top/include" \
		-DKEVENT_UAPI_INCLUDE_DIR="$top/include/uapi" \
		>"$out/cmake.log" 2>&1) ||
		{ tail -30 "$out/cmake.log"; log "cmake failed ($out/cmake.log)"; exit 1; }
	grep -q 'kevent backend:' "$out/cmake.log" ||
		{ log "cmake did not take the kevent backend"; exit 1; }
}

# make -j2 in $out/obj; a warning in the backend is an error.
make_obj() {
	log "building (make -j2${*:+ $*})"
	make -C "$out/obj" -j2 "$@" >"$out/make.log" 2>&1 ||
		{ grep -E 'error|Error' "$out/make.log" | head -30; log "build failed ($out/make.log)"; exit 1; }
	if grep -n 'kevent\.c.*warning' "$out/make.log"; then
		log "warnings in kevent.c"
		exit 1
	fi
}

do_build_libevent() {
	unpack
	# Static programs for the guest: -static at link time, and
	# libevent built as static libraries.
	configure "static, no OpenSSL, no zlib" \
		-DCMAKE_EXE_LINKER_FLAGS="-static" \
		-DEVENT__LIBRARY_TYPE=STATIC \
		-DEVENT__DISABLE_OPENSSL=ON \
		-DEVENT__DISABLE_SAMPLES=ON \
		-DEVENT__DISABLE_BENCHMARK=OFF \
		-DEVENT__DISABLE_TESTS=OFF \
		-DEVENT__DISABLE_REGRESS=OFF \
		-DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON
	make_obj
}

do_build_libuv() {
	unpack
	# A static runner, through the linker's flags rather than upstream's
	# QEMU=ON: that one also defines __QEMU__, which compiles out some
	# twenty tests that qemu-user cannot run (signal_multiple_loops,
	# tty_pty, tcp_write_after_connect, ...); the guest is a whole
	# machine and runs them.
	configure "static" \
		-DCMAKE_EXE_LINKER_FLAGS="-static" \
		-DLIBUV_BUILD_TESTS=ON \
		-DLIBUV_BUILD_BENCH=ON
	if [ "${PEERS_BENCH:-1}" = 0 ]; then
		make_obj uv_run_tests_a
	else
		make_obj uv_run_tests_a uv_run_benchmarks_a
	fi
}

# The guest's programs: libevent's, stripped, and the two scripts.
do_initramfs_libevent() {
	local src=$out/src/$version obj=$out/obj g=$out/guest p
	rm -rf "$g"
	mkdir -p "$g/bin"
	for p in regress test-init test-eof test-weof test-closed \
		test-changelist test-time test-fdleak test-dumpevents \
		test-ratelim bench bench_cascade; do
		strip -o "$g/bin/$p" "$obj/bin/$p"
	done
	if [ "${PEERS_BENCH:-1}" != 0 ]; then
		# bench.c over pipes instead of socket pairs: its USE_PIPES
		# makes pipes but still calls recv() and send(), which fail
		# on them (ENOTSOCK) and leave the loop spinning; read() and
		# write() instead.
		gcc -O2 -static -DUSE_PIPES -D'recv(f,b,n,x)=read(f,b,n)' \
			-D'send(f,b,n,x)=write(f,b,n)' \
			-I"$src/include" -I"$obj/include" \
			-I"$src" -I"$obj" -o "$g/bin/bench-pipes" \
			"$src/test/bench.c" "$obj/lib/libevent_core.a" 2>"$out/bench-pipes.log" ||
			{ cat "$out/bench-pipes.log"; log "bench-pipes failed"; exit 1; }
		strip "$g/bin/bench-pipes"
	fi
	install -m 755 "$peers_src/run.sh" "$peers_src/bench.sh" \
		"$top/testsuite/peers/centis.sh" "$g/bin/"
	{
		echo "peers-kevent bin/run.sh kevent"
		echo "peers-epoll bin/run.sh epoll"
		for m in ${PEERS_MODES:-}; do
			echo "peers-$m bin/run.sh $m"
		done
		[ "${PEERS_BENCH:-1}" = 0 ] || echo "peers-bench bin/bench.sh ${PEERS_BENCH_RUNS:-3} ${PEERS_BENCH_ROUNDS:-4}"
	} >"$g/peers.list"
	scripts/initramfs.sh "$g/bin" "$g/peers.list" "$out/initramfs.cpio"
}

# The guest's programs: the test runner, stripped, the fixtures the
# tests read (test/fixtures, as a tar file: the initramfs holds files
# only), and run.sh, once per backend; then the benchmarks (bench.sh).
do_initramfs_libuv() {
	local src=$out/src/$version obj=$out/obj g=$out/guest m
	rm -rf "$g"
	mkdir -p "$g/bin"
	strip -o "$g/bin/uv_run_tests_a" "$obj/uv_run_tests_a"
	tar cf "$g/bin/libuv-fixtures.tar" -C "$src" test/fixtures
	install -m 755 "$peers_src/run.sh" "$peers_src/bench.sh" \
		"$top/testsuite/peers/centis.sh" "$g/bin/"
	[ "${PEERS_BENCH:-1}" = 0 ] ||
		strip -o "$g/bin/uv_run_benchmarks_a" "$obj/uv_run_benchmarks_a"
	{
		for m in kevent epoll; do
			echo "peers-$m bin/run.sh $m ${PEERS_TESTS:-}"
		done
		[ "${PEERS_BENCH:-1}" = 0 ] || echo "peers-bench bin/bench.sh ${PEERS_BENCH_RUNS:-3}"
	} >"$g/peers.list"
	scripts/initramfs.sh "$g/bin" "$g/peers.list" "$out/initramfs.cpio"
}

# One boot runs everything.  boot.sh is run from a copy: a script that
# changes while bash reads it runs garbage.
do_boot() {
	local t0 khz
	mkdir -p "$out/tools/scripts"
	cp scripts/boot.sh "$out/tools/scripts/boot.sh"
	# The clock: the TSC, as make bench has it.  Under TCG the guest
	# cannot calibrate QEMU's TSC (the host's) and falls back to
	# jiffies, 4 ms steps, too coarse for bench.c's runs of a few ms:
	# tell it the frequency, and that it is good.
	khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
	t0=$(date +%s)
	INITRD=$out/initramfs.cpio \
		APPEND="tsc=reliable${khz:+ tsc_early_khz=$khz} kevent.timeout=${PEERS_PROGRAM_LIMIT:-2400}" \
		bash "$out/tools/scripts/boot.sh" check "$out/guest.log" \
		"${PEERS_TIME_LIMIT:-3000}" | sed 's/^  guest: /  guest: peers: /' || true
	log "boot took $(($(date +%s) - t0)) s (log: ${out#"$top"/}/guest.log)"
}

do_report_libevent() {
	local status=0
	python3 testsuite/peers/report.py \
		--dumpevents-check "$out/src/$version/test/check-dumpevents.py" \
		"$out/guest.log" || status=1
	if grep -q '^### BENCH BEGIN' "$out/guest.log"; then
		python3 testsuite/peers/bench.py "$out/guest.log" \
			--markdown "$out/bench.md" --plot "$out/libevent-bench.png" ||
			status=1
		log "bench: ${out#"$top"/}/bench.md, ${out#"$top"/}/libevent-bench.png"
	fi
	return $status
}

do_report_libuv() {
	local status=0
	python3 testsuite/peers/report.py "$out/guest.log" || status=1
	if grep -q '^### BENCH BEGIN' "$out/guest.log"; then
		python3 testsuite/peers/libuv/bench.py "$out/guest.log" \
			--markdown "$out/bench.md" || status=1
		log "bench: ${out#"$top"/}/bench.md"
	fi
	return $status
}

case "$what" in
build) "do_build_$lib" ;;
initramfs) "do_build_$lib"; "do_initramfs_$lib" ;;
boot) do_boot ;;
report) "do_report_$lib" ;;
all)
	"do_build_$lib"
	"do_initramfs_$lib"
	do_boot
	"do_report_$lib"
	;;
*)
	echo "usage: scripts/peers.sh [libevent|libuv] [build|initramfs|boot|report|all]" >&2
	exit 2
	;;
esac
