"""The API reference builds from the docstrings with warnings as errors (issue 19, item 5).

The same command as README's: ``python3 -m sphinx -W -b html docs <dir>``. A docstring that is not
valid reST (an unclosed inline literal, a bad indent, an undefined substitution such as ``|E|``
outside a literal) or a public name missing from the package fails here."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_api_reference_builds_without_warnings(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
                          str(ROOT / "docs"), str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-4000:]
    page = (tmp_path / "api.html").read_text()
    for name in ("maximum_matching", "max_flow", "suitor", "stable_marriage", "louvain", "leiden", "check_maximum_matching"):
        assert f'id="jaxmatch.{name}"' in page or f'id="jaxmatch.certify.{name}"' in page, name
