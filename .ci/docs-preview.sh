#!/usr/bin/env bash
# Live preview of a DocC catalog, built from the same symbol graphs as .ci/docs.sh:
#
#   .ci/docs-preview.sh                         Courier's catalog on http://localhost:8080/documentation/courier
#   .ci/docs-preview.sh CourierTestServer 8081  CourierTestServer's, on port 8081
#
# DocC rebuilds the pages when a file in the catalog (an article, the landing page) changes; after
# changing a `///` comment, stop it and run it again (the symbol graphs come from the build).
# On a machine without a browser, `.ci/docs.sh` writes a static archive instead:
# .build/docs/<Module>.doccarchive (serve it with any static file server).
set -euo pipefail
cd "$(dirname "$0")/.."
module=${1:-Courier}
port=${2:-8080}
case "$module" in
  Courier|CourierTestServer) ;;
  *) echo "usage: $0 [Courier|CourierTestServer] [PORT]" >&2; exit 2 ;;
esac
.ci/docs.sh --graphs-only
mkdir -p .build/docs/preview
echo "docs-preview: http://localhost:$port/documentation/$(printf '%s' "$module" | tr '[:upper:]' '[:lower:]')" >&2
exec docc preview "Sources/$module/$module.docc" --additional-symbol-graph-dir ".build/docs/symbol-graphs/$module" \
  --output-dir ".build/docs/preview/$module.doccarchive" --fallback-display-name "$module" \
  --fallback-bundle-identifier "org.courier.$module" --port "$port"
