#!/bin/sh
# Fetches Apache ECharts from the npm registry into web/assets/echarts/,
# which the web UI (package web) embeds: the minified dist file with its
# LICENSE, NOTICE and the license of the d3 code it contains (Apache-2.0,
# BSD-3-Clause). `make echarts` runs it; the files are committed, so a
# build needs no network. To update, change VERSION and the checksums (and
# web.EChartsVersion).
set -eu
VERSION=6.1.0
TGZ_SHA256=681aff88cc1038c3fa941a3a53d1b177a52250b05335efc607d6105ae13be481
JS_SHA256=b66b25aeb4df84e33199dc21694014d336d222cbd9deb0e5a7c14bd6aa0d0fd0
dest=$(cd "$(dirname "$0")/.." && pwd)/web/assets/echarts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "echarts@$VERSION" >/dev/null
echo "$TGZ_SHA256  echarts-$VERSION.tgz" | sha256sum -c --quiet -
tar xzf "echarts-$VERSION.tgz"
echo "$JS_SHA256  package/dist/echarts.min.js" | sha256sum -c --quiet -
mkdir -p "$dest"
cp package/dist/echarts.min.js package/LICENSE package/NOTICE package/licenses/LICENSE-d3 "$dest/"
echo "echarts $VERSION -> $dest"
