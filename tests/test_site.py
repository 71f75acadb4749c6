"""The course site (`make docs`): a lesson executed as nbdev-test runs it and rendered with its outputs, offline; cells
flagged for a GPU shown as not run; a lesson that fails is shown as failed and fails the build; chromium with no
network renders a page. One small real lesson (03_presets) and one made-up failing lesson keep this to seconds.
"""
import json, subprocess, sys
from pathlib import Path
import pytest

import headless

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / 'site' / 'build.py'
sys.path.insert(0, str(ROOT / 'slides'))
from offline import scan_tree  # noqa: E402


def _site(tmp:Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BUILD), '--out', str(tmp / 'site'), '--work', str(tmp / 'exec'), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope='module')
def lesson_site(tmp_path_factory):
    "The site with one real lesson, built once."
    tmp = tmp_path_factory.mktemp('site')
    p = _site(tmp, '--only', '03_presets')
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return tmp / 'site', tmp / 'exec'


def test_a_lesson_is_rendered_with_its_outputs(lesson_site):
    site, work = lesson_site
    page = (site / '03_presets.html').read_text()
    meta = json.loads((work / '03_presets.json').read_text())
    assert meta['ok'] and meta['cells']['run'] > 0 and meta['error'] is None
    executed = json.loads((work / '03_presets.ipynb').read_text())
    outs = [o for c in executed['cells'] if c['cell_type'] == 'code' for o in c.get('outputs', [])]
    assert len(outs) >= 3, 'the executed copy carries outputs'
    assert page.count('jp-OutputArea-output') >= len([o for o in outs if o['output_type'] != 'stream']) > 0
    assert 'Model presets' in page and 'agentforge course' in page  # the lesson's title, the site's nav
    committed = json.loads((ROOT / 'nbs' / '03_presets.ipynb').read_text())
    assert not any(c.get('outputs') for c in committed['cells'] if c['cell_type'] == 'code'), 'nbs/ stays clean'
    home = (site / 'index.html').read_text()
    assert 'href="03_presets.html"' in home and 'ran' in home
    assert (site / 'retros' / 'index.html').exists()


def test_no_page_names_a_remote_asset(lesson_site):
    site, _ = lesson_site
    assert scan_tree(site) == {}
    page = (site / '03_presets.html').read_text()
    assert 'require.js' not in page and 'mathjax' not in page.lower() and 'unpkg' not in page


def test_flagged_cells_are_marked_and_a_failing_lesson_fails_the_build(tmp_path):
    nbs = tmp_path / 'nbs'
    nbs.mkdir()
    cells = [('markdown', '# A lesson that fails\n\n> made up by tests/test_site.py'), ('code', 'x = 6 * 7\nx'),
             ('code', '#| gpu\nimport torch\ntorch.cuda.init()'), ('code', "raise ValueError('boom: on purpose')"),
             ('code', "print('never printed')")]
    nb = dict(nbformat=4, nbformat_minor=5, metadata={'kernelspec': {'name': 'python3', 'language': 'python',
                                                                     'display_name': 'Python 3'}},
              cells=[dict(cell_type=t, id=f'c{i}', metadata={}, source=s, **({'outputs': [], 'execution_count': None}
                                                                            if t == 'code' else {}))
                     for i, (t, s) in enumerate(cells)])
    (nbs / '99_fails.ipynb').write_text(json.dumps(nb))
    p = _site(tmp_path, '--nbs', str(nbs))
    assert p.returncode == 1 and '99_fails' in p.stderr and 'did not execute' in p.stderr, p.stderr[-2000:]
    page = (tmp_path / 'site' / '99_fails.html').read_text()
    assert 'failed to execute' in page and 'boom: on purpose' in page
    assert 'not run: needs a GPU' in page and 'not run: an earlier cell failed' in page
    assert '42' in page and 'never printed</pre>' not in page  # outputs up to the failure, nothing after it
    assert 'FAILED' in (tmp_path / 'site' / 'index.html').read_text()
    meta = json.loads((tmp_path / 'exec' / '99_fails.json').read_text())
    assert (meta['ok'], meta['cells']) == (False, {'run': 2, 'not_run': 1, 'after_failure': 1})


@pytest.mark.browser
def test_chromium_renders_a_lesson_page_offline(lesson_site, tmp_path):
    why = headless.cannot_start()
    if why: pytest.skip(why)
    site, _ = lesson_site
    url = (site / '03_presets.html').as_uri()
    assert 'jp-OutputArea-output' in headless.render(url, tmp_path / 'page.png', '1280,1000')
    ink = headless.ink(tmp_path / 'page.png')
    assert ink['ink'] > 0.05 and ink['colours'] > 100, f'the page rendered blank: {ink}'
    headless.keep(tmp_path / 'page.png', 'site-03_presets.png')


def test_committed_screenshots_exist_and_are_not_blank():
    "The README shows the course through `results/screenshots/`; each image it links is there and has content."
    import re
    readme = (ROOT / 'README.md').read_text()
    linked = sorted(set(re.findall(r'\]\((results/screenshots/[\w.-]+\.png)\)', readme)))
    assert len(linked) == 3, linked
    for rel in linked:
        ink = headless.ink(ROOT / rel)
        assert ink['ink'] > 0.05 and ink['colours'] > 100, f'{rel} looks blank: {ink}'
