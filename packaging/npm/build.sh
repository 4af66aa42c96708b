#!/usr/bin/env bash
# Cross-builds codexacp and fills the npm packages: the main package codexacp
# (the launcher, from packaging/npm/codexacp) and one package per platform
# holding its binary. Nothing is published. See packaging/npm/README.md.
#
# usage: packaging/npm/build.sh [-o DIR] [-v VERSION] [--pack] [--strict] [--no-trimpath] [--list] [PLATFORM...]
#   PLATFORM   linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 (default: all)
#   -o DIR     where the packages go, a folder each (default: packaging/npm/out);
#              the folder is emptied first, so it must be new, empty or made by this script
#   -v VERSION the version to stamp into the binaries and packages (default: $CODEXACP_VERSION,
#              else the v* tag on HEAD without its v, else 0.0.0-dev.g<commit>, after a tag
#              <tag>-dev.<commits since>.g<commit>; .dirty added for uncommitted changes)
#   --pack     also `npm pack` each package into DIR (DIR/*.tgz)
#   --strict   fail when a platform does not build (releases); by default a platform that
#              does not compile is skipped and reported
#   --no-trimpath  build without -trimpath, reusing `go test`'s build cache (the npm
#              install test); releases keep it, so no local path ends up in the binaries
#   --list     print the platforms and exit
set -euo pipefail

platforms=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$here/out
version=${CODEXACP_VERSION:-}
pack=0
strict=0
trimpath=-trimpath
want=()

die() { echo "build.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -o) [ $# -ge 2 ] || die "-o needs a folder"; out=$2; shift 2 ;;
    -v) [ $# -ge 2 ] || die "-v needs a version"; version=$2; shift 2 ;;
    --pack) pack=1; shift ;;
    --strict) strict=1; shift ;;
    --no-trimpath) trimpath=; shift ;;
    --list) printf '%s\n' "${platforms[@]}"; exit 0 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown flag $1 (see --help)" ;;
    *)
      [[ " ${platforms[*]} " == *" $1 "* ]] || die "unknown platform $1 (want one of: ${platforms[*]})"
      want+=("$1"); shift ;;
  esac
done
[ ${#want[@]} -gt 0 ] || want=("${platforms[@]}")

# The version: a semver npm accepts, without a leading v.
git_version() {
  local tag n sha dirty=""
  sha=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || { echo 0.0.0-dev; return; }
  git -C "$root" diff --quiet HEAD 2>/dev/null || dirty=.dirty
  if tag=$(git -C "$root" describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null) && [ -z "$dirty" ]; then
    echo "${tag#v}"
  elif tag=$(git -C "$root" describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null); then
    n=$(git -C "$root" rev-list --count "$tag..HEAD")
    echo "${tag#v}-dev.$n.g$sha$dirty"
  else
    echo "0.0.0-dev.g$sha$dirty"
  fi
}
[ -n "$version" ] || version=$(git_version)
version=${version#v}
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
[[ $version =~ $semver ]] || die "version $version is not a semantic version (like 1.2.3 or 1.2.3-rc.1)"

command -v go >/dev/null || die "go is not on PATH"
command -v node >/dev/null || die "node is not on PATH (it writes the package.json files)"
[ $pack = 0 ] || command -v npm >/dev/null || die "npm is not on PATH (needed for --pack)"

# The output folder is ours to empty: new, empty, or marked by an earlier run.
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "$(ls -A "$out")" ] && [ ! -e "$out/.codexacp-npm-out" ]; then
  die "$out is not empty and was not made by this script; pick another -o"
fi
find "$out" -mindepth 1 -delete
touch "$out/.codexacp-npm-out"

license=$root/LICENSE
[ -f "$license" ] || echo "build.sh: warning: no LICENSE at the repository root; the packages go without one" >&2

# stamp FILE VERSION: sets the version of the package.json FILE and of all its
# optional dependencies (the platform packages move in lockstep with the launcher).
stamp() {
  node -e '
    const fs = require("fs");
    const [file, version] = process.argv.slice(1);
    const p = JSON.parse(fs.readFileSync(file, "utf8"));
    p.version = version;
    for (const k of Object.keys(p.optionalDependencies || {})) p.optionalDependencies[k] = version;
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
  ' "$@"
}

# platform_json FILE PLATFORM OS CPU BINARY: writes the platform package's
# package.json, with the main package's version, license and repository.
platform_json() {
  node -e '
    const fs = require("fs");
    const [file, main, platform, os, cpu, binary] = process.argv.slice(1);
    const m = JSON.parse(fs.readFileSync(main, "utf8"));
    const p = {
      name: `codexacp-${platform}`,
      version: m.version,
      description: `The codexacp binary for ${os} ${cpu}; install codexacp, which runs it`,
      homepage: m.homepage,
      repository: m.repository,
      license: m.license,
      os: [os],
      cpu: [cpu],
      files: [binary],
      preferUnplugged: true,
    };
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
  ' "$1" "$out/codexacp/package.json" "${@:2}"
}

# The main package: the launcher.
mkdir -p "$out/codexacp"
cp -R "$here/codexacp/." "$out/codexacp/"
stamp "$out/codexacp/package.json" "$version"
[ ! -f "$license" ] || cp "$license" "$out/codexacp/LICENSE"

# The platform packages: a binary each.
built=()
skipped=()
for p in "${want[@]}"; do
  case $p in
    linux-x64) goos=linux goarch=amd64 os=linux cpu=x64 ;;
    linux-arm64) goos=linux goarch=arm64 os=linux cpu=arm64 ;;
    darwin-x64) goos=darwin goarch=amd64 os=darwin cpu=x64 ;;
    darwin-arm64) goos=darwin goarch=arm64 os=darwin cpu=arm64 ;;
    win32-x64) goos=windows goarch=amd64 os=win32 cpu=x64 ;;
  esac
  exe=codexacp
  [ "$goos" != windows ] || exe=codexacp.exe
  dir=$out/codexacp-$p
  mkdir -p "$dir/bin"
  echo "build.sh: building $p ($goos/$goarch)" >&2
  if ! errs=$(cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build $trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$dir/bin/$exe" ./cmd/codexacp 2>&1); then
    rm -rf "$dir"
    skipped+=("$p: $(printf '%s\n' "$errs" | grep -v '^#' | head -n 1)")
    continue
  fi
  platform_json "$dir/package.json" "$p" "$os" "$cpu" "bin/$exe"
  [ ! -f "$license" ] || cp "$license" "$dir/LICENSE"
  built+=("$p")
done

if [ $pack = 1 ]; then
  for dir in "$out/codexacp" ${built[@]+"${built[@]/#/$out/codexacp-}"}; do
    (cd "$out" && npm pack --silent --pack-destination "$out" "$dir" >/dev/null)
  done
fi

echo "codexacp $version: packages in $out"
echo "  built:   codexacp ${built[*]/#/codexacp-}"
for s in ${skipped[@]+"${skipped[@]}"}; do
  echo "  skipped: codexacp-$s"
done
[ $pack = 0 ] || (cd "$out" && ls -1 ./*.tgz | sed 's|^\./|  packed:  |')
if [ ${#built[@]} -eq 0 ]; then
  echo "build.sh: no platform built" >&2
  exit 1
fi
if [ $strict = 1 ] && [ ${#skipped[@]} -gt 0 ]; then
  echo "build.sh: --strict: ${#skipped[@]} platform(s) did not build" >&2
  exit 1
fi
