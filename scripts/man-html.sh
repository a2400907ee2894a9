#!/bin/sh
# The HTML manual in doc/html, made from man/ by mandoc.
#
#   scripts/man-html.sh build [DIR]   write the manual (default doc/html)
#   scripts/man-html.sh check         fail if doc/html differs from man/
#
# Each page becomes NAME.SECTION.html with its cross-references linked;
# each alias page (a one-line .so) becomes a page that sends the reader to
# its target; index.html lists every page by section with its NAME line.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/man"

build() {
	out=$1
	rm -rf "$out"
	mkdir -p "$out"
	for page in man*/*; do
		file=${page#*/}
		name=${file%.*}
		sect=${file##*.}
		first=$(head -n 1 "$page")
		case "$first" in
		.so\ *)
			target=${first#.so }
			target=${target#*/}
			href="${target%.*}.${target##*.}.html"
			printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=%s">\n<title>%s(%s)</title></head>\n<body><p>%s(%s): see <a href="%s">%s(%s)</a>.</p></body></html>\n' \
				"$href" "$name" "$sect" "$name" "$sect" "$href" \
				"${target%.*}" "${target##*.}" >"$out/$name.$sect.html"
			;;
		*)
			mandoc -Thtml -Ios= -Oman=%N.%S.html "$page" \
				>"$out/$name.$sect.html"
			;;
		esac
	done
	{
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n<title>kevent for Linux 6.1: the manual</title></head>\n<body>\n<h1>kevent for Linux 6.1: the manual</h1>\n'
		for sect in 7 2 3 2type 2const; do
			printf '<h2>Section %s</h2>\n<ul>\n' "$sect"
			for page in man*/*."$sect"; do
				file=${page#*/}
				name=${file%.*}
				if head -n 1 "$page" | grep -q '^\.so '; then
					what="alias of $(head -n 1 "$page" | sed 's|^\.so man[^/]*/||')"
				else
					what=$(sed -n '/^\.SH NAME/{n;p;q;}' "$page" |
						sed 's/^.* \\- //; s/\\-/-/g; s/&/\&amp;/g; s/</\&lt;/g')
				fi
				printf '<li><a href="%s.%s.html">%s(%s)</a> %s</li>\n' \
					"$name" "$sect" "$name" "$sect" "$what"
			done
			printf '</ul>\n'
		done
		printf '</body></html>\n'
	} >"$out/index.html"
}

case "${1:-build}" in
build)
	build "${2:-$top/doc/html}"
	;;
check)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp/html"
	if ! diff -r "$top/doc/html" "$tmp/html" >"$tmp/diff"; then
		head -n 20 "$tmp/diff"
		echo "doc/html is out of date: run scripts/man-html.sh build"
		exit 1
	fi
	;;
*)
	echo "usage: $0 build [DIR] | check" >&2
	exit 1
	;;
esac
