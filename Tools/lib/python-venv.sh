# Sourced by Tools/compat-test, Tools/console-test and Tools/test: a Python venv with pinned packages.
#
#   ensure_venv VENV REQUIREMENTS   makes VENV with the packages pinned in REQUIREMENTS unless it
#                                   was already made from the same file
#
# Every package is pinned to an exact version in the requirements file (the versions a test passed
# with), so a new release on PyPI cannot change or break a run. The venv keeps a copy of the file it
# was made from and is made again, from scratch, when the file changes.

ensure_venv() {
    local venv="$1" requirements="$2"
    if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$venv/requirements.txt"; then
        return 0
    fi
    echo "Creating $venv with the packages pinned in $requirements" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$venv/requirements.txt"
}
