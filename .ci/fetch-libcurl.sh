#!/usr/bin/env bash
# Fetches a libcurl other than the system's, for running the curl-transport suites on it
# (COURIER_LIBCURL), and prints the path of the libcurl file. Cached under the CI root: a second run
# downloads nothing. Nothing of it is ever committed.
#
#   .ci/fetch-libcurl.sh wheel      libcurl 8.23.0 from PyPI: pycurl 7.49.0's manylinux wheel carries it in
#                                   pycurl.libs/ (built with nghttp2, ngtcp2/nghttp3 and its own OpenSSL 3.6,
#                                   every library it needs beside it, found through its RPATH $ORIGIN).
#   .ci/fetch-libcurl.sh bullseye   libcurl 7.74.0 from Debian 11 (bullseye-security): libcurl4 with the
#                                   OpenSSL 1.1 and OpenLDAP 2.4 it needs, unpacked with dpkg -x. It has no
#                                   RPATH: run with LD_LIBRARY_PATH set to the directory printed second
#                                   (its dependencies only, so that FoundationNetworking keeps the system's
#                                   libcurl). The InRelease signature is checked with gpgv against Debian's
#                                   archive keyring, the packages against the SHA-256 sums it signs.
set -euo pipefail
root=${COURIER_CI_ROOT:-/tmp/courier-ci}
kind=${1:-wheel}

case "$kind" in
wheel)
  dir=$root/libcurl/pycurl-7.49.0
  if [ ! -f "$dir/complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/download"
    # A slow index is waited for (60 s per read, ten retries), not given up on.
    python3 -m pip download --quiet --disable-pip-version-check --timeout 60 --retries 10 --no-deps \
      --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 pycurl==7.49.0 -d "$dir/download" >&2
    wheel=$(ls "$dir"/download/pycurl-7.49.0-*manylinux*.whl | head -n 1)
    python3 -m zipfile -e "$wheel" "$dir/unpacked"
    mv "$dir/unpacked/pycurl.libs" "$dir/lib"
    rm -rf "$dir/unpacked"
    touch "$dir/complete"
  fi
  file=$(ls "$dir"/lib/libcurl-*.so.* | head -n 1)
  echo "$file"
  ;;
bullseye)
  dir=$root/libcurl/debian-bullseye
  if [ ! -f "$dir/complete" ]; then
    command -v gpgv >/dev/null && command -v dpkg >/dev/null \
      || { echo "fetch-libcurl.sh: bullseye needs gpgv and dpkg" >&2; exit 1; }
    rm -rf "$dir" && mkdir -p "$dir/download"
    mirror=http://deb.debian.org/debian-security
    curl -sSf -o "$dir/download/InRelease" "$mirror/dists/bullseye-security/InRelease"
    gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg "$dir/download/InRelease" 2>/dev/null \
      || { echo "fetch-libcurl.sh: bad signature on bullseye-security's InRelease" >&2; exit 1; }
    curl -sSf -o "$dir/download/Packages.xz" "$mirror/dists/bullseye-security/main/binary-amd64/Packages.xz"
    python3 - "$dir/download" "$mirror" <<'PY'
import hashlib, lzma, os, re, sys, urllib.request
download, mirror = sys.argv[1], sys.argv[2]
release = open(os.path.join(download, "InRelease")).read()
packages_xz = open(os.path.join(download, "Packages.xz"), "rb").read()
signed = re.search(r"^ ([0-9a-f]{64}) +\d+ main/binary-amd64/Packages\.xz$", release.split("SHA256:")[1], re.M)
if signed is None or hashlib.sha256(packages_xz).hexdigest() != signed.group(1):
    sys.exit("fetch-libcurl.sh: Packages.xz does not match the signed InRelease")
wanted = {"libcurl4", "libssl1.1", "libldap-2.4-2"}
for block in lzma.decompress(packages_xz).decode().split("\n\n"):
    fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(" "))
    if fields.get("Package") in wanted and fields.get("Architecture") == "amd64":
        data = urllib.request.urlopen(f"{mirror}/{fields['Filename']}", timeout=120).read()
        if hashlib.sha256(data).hexdigest() != fields["SHA256"]:
            sys.exit(f"fetch-libcurl.sh: {fields['Filename']} does not match its signed SHA-256")
        with open(os.path.join(download, os.path.basename(fields["Filename"])), "wb") as f:
            f.write(data)
        wanted.discard(fields["Package"])
if wanted:
    sys.exit(f"fetch-libcurl.sh: not in bullseye-security: {sorted(wanted)}")
PY
    for deb in "$dir"/download/*.deb; do dpkg -x "$deb" "$dir/root"; done
    from=$dir/root/usr/lib/x86_64-linux-gnu
    mkdir -p "$dir/lib" "$dir/deps"
    cp -a "$from"/libcurl.so.4.* "$dir/lib/"
    cp -a "$from"/libssl.so.1.1 "$from"/libcrypto.so.1.1 "$from"/libldap_r-2.4.so.2* "$from"/liblber-2.4.so.2* "$dir/deps/"
    rm -rf "$dir/root"
    touch "$dir/complete"
  fi
  file=$(ls "$dir"/lib/libcurl.so.4.* | head -n 1)
  echo "$file"
  echo "$dir/deps"
  ;;
*)
  echo "usage: .ci/fetch-libcurl.sh wheel|bullseye" >&2
  exit 2
  ;;
esac
