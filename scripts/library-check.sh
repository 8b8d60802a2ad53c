#!/usr/bin/env bash
# The measurements behind the library decisions in docs/architecture.md ("Libraries"): each
# candidate Debian package against what this daemon needs. Installs the candidates (apt),
# builds the probes in test/libcheck/ and prints one figure each. Not part of CI: the
# project does not depend on these packages; run it when a candidate's release changes.
# Usage: scripts/library-check.sh   (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=$( [ "$(id -u)" -eq 0 ] || echo sudo )
$sudo apt-get install -y libcli11-dev libspdlog-dev libcpp-httplib-dev prometheus-cpp-dev \
  >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build() {  # build <probe> [libraries...]
  local probe=$1
  shift
  g++ -std=c++20 -O1 -w -Itest/libcheck "test/libcheck/$probe.cpp" -o "$out/$probe" "$@" -lpthread
}
lib_size() { stat -L -c %s "$(ldconfig -p | awk -v l="$1" '$1 == l {print $NF; exit}')"; }

echo "== CLI11 $(dpkg-query -W -f '${Version}' libcli11-dev): the Go flag syntax"
start=$SECONDS
build cli11_go_syntax
echo "compile time of one translation unit including CLI11: $((SECONDS - start)) s"
"$out/cli11_go_syntax"

echo "== spdlog $(dpkg-query -W -f '${Version}' libspdlog-dev): a message quoting hostile text"
build spdlog_hostile_text -DSPDLOG_FMT_EXTERNAL -lspdlog -lfmt
"$out/spdlog_hostile_text" 2>&1 | cat -A | sed 's/^/  /'
echo "  lines written for 2 messages: $("$out/spdlog_hostile_text" 2>&1 | wc -l) (ours: 2)"
echo "  shared libraries added to the image: libspdlog $(lib_size libspdlog.so.1.10) +" \
  "libfmt $(lib_size libfmt.so.9) bytes"

echo "== cpp-httplib $(dpkg-query -W -f '${Version}' libcpp-httplib-dev): slow clients"
build httplib_slow_clients $(pkg-config --cflags --libs cpp-httplib)
for n in 0 7 8 16; do "$out/httplib_slow_clients" "$n"; done
echo "  its library links: $(ldd "$(ldconfig -p | awk '$1 ~ /libcpp-httplib.so/ {print $NF; exit}')" \
  | awk '{print $1}' | grep -E 'ssl|crypto|brotli|libz' | tr '\n' ' ')"

echo "== ours (pkg/metrics/http_endpoint.h): the same slow clients"
if [ -x build/test/endpoint_slow_clients ]; then
  for n in 0 8 16 64 256; do build/test/endpoint_slow_clients "$n"; done
else
  echo "  (build first: scripts/build.sh)"
fi

echo "== prometheus-cpp $(dpkg-query -W -f '${Version}' prometheus-cpp-dev): the pull exposer"
build prometheus_exposer_slow_clients -lprometheus-cpp-pull -lprometheus-cpp-core
for n in 0 1 2 3; do "$out/prometheus_exposer_slow_clients" "$n"; done
echo "== prometheus-cpp core: the text serializer on hostile label values"
build prometheus_core_text -lprometheus-cpp-core
"$out/prometheus_core_text" | sed 's/^/  /'
echo "  libprometheus-cpp-core: $(lib_size libprometheus-cpp-core.so.1.0) bytes"
