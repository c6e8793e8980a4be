#!/usr/bin/env bash
# Checks that the repository explains itself (ctest name: docs):
#   (a) no file refers to a document or path outside the repository: the
#       build machines' shared notes, their absolute paths, a sibling
#       ../shared folder (the pattern is `outside` below);
#   (b) every relative link [text](target) in README.md and docs/*.md points
#       at a file or folder that exists in the repository (http(s), mailto and
#       pure #anchors are skipped); a #anchor after a .md file name must be
#       one of that page's headings, as GitHub makes them (lower case, spaces
#       to hyphens, punctuation dropped);
#   (c) README.md links every page of docs/;
#   (d) every docs/NAME.md named in any file (comments included) exists.
# Prints each offender as FILE:LINE: problem and exits 1 if there is any.
#   bash scripts/check-docs.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
self=scripts/check-docs.sh
bad=0
report() { echo "$1"; bad=1; }
# The anchors of a markdown page's headings, one a line (GitHub's rule, without
# the -1, -2 suffixes of repeated headings).
anchors() {
  sed -n 's/^#\{1,6\} \{1,\}//p' "$1" | tr '[:upper:]' '[:lower:]' | LC_ALL=C tr -cd 'a-z0-9 _\n-' | tr ' ' '-'
}

# Files to scan: the tracked ones in a git checkout, else every file but build outputs.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -type f -not -path './.git/*' -not -path './build*' -not -path './out/*' |
    sed 's|^\./||' | sort)
fi

# (a) references to documents outside the repository.
outside='BART\.md|CONVENTIONS\.md|ARCHITECTURE\.md|DEVICE\.md|\.\./shared|shared/docs|/work/|/check/'
for f in "${files[@]}"; do
  [[ $f == "$self" || ! -f $f ]] && continue
  while IFS= read -r hit; do
    report "$f:${hit%%:*}: refers outside the repository: ${hit#*:}"
  done < <(grep -I -n -E "$outside" -- "$f")
done

# (b) relative links in README.md and docs/*.md.
pages=(README.md docs/*.md)
for page in "${pages[@]}"; do
  [[ -f $page ]] || continue
  dir=$(dirname "$page")
  while IFS= read -r hit; do
    line=${hit%%:*}
    link=${hit#*:}
    target=${link#*](}
    target=${target%)}
    target=${target#<}
    target=${target%>}
    case $target in
      http://* | https://* | mailto:* | '#'* | '') continue ;;
    esac
    path=${target%%#*}
    resolved=$(realpath -m -- "$dir/$path")
    if [[ $resolved != "$root" && $resolved != "$root"/* ]]; then
      report "$page:$line: link leaves the repository: $target"
    elif [[ ! -e $resolved ]]; then
      report "$page:$line: broken link: $target"
    # grep reads every anchor (no -q): with pipefail, -q's early exit made the
    # page's sed die of SIGPIPE, and a present anchor read as missing at random.
    elif [[ $target == *'#'* && $resolved == *.md ]] && ! anchors "$resolved" | grep -xF -- "${target#*#}" >/dev/null; then
      report "$page:$line: no heading for the anchor: $target"
    fi
  done < <(grep -n -o -E '\[[^]]*\]\([^) ]+\)' -- "$page")
done

# (c) README.md links every page of docs/.
for doc in docs/*.md; do
  grep -q -F "]($doc" README.md || report "README.md: does not link $doc"
done

# (d) docs pages named anywhere, e.g. in a comment "(docs/gridding.md)"; not a
# longer path that ends so (another project's tree/docs/x.md in a URL).
for f in "${files[@]}"; do
  [[ $f == "$self" || ! -f $f ]] && continue
  while IFS= read -r hit; do
    name=docs/${hit#*docs/}
    [[ -e $name ]] || report "$f:${hit%%:*}: names a missing page: $name"
  done < <(grep -I -n -o -E '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_.-]+\.md' -- "$f")
done

if ((bad)); then
  echo "check-docs: FAILED" >&2
  exit 1
fi
echo "check-docs: ok (${#files[@]} files, ${#pages[@]} pages)"
