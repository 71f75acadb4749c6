"""The decks (`make slides`): every deck builds from the repository's own lessons, code and results; no deck names a
remote asset; every slide has speaker notes and names what it read; a headless chromium with no network renders one.

reveal.js comes from npm, pinned by `slides/package-lock.json`: when it is not installed yet this installs it
(`npm ci`, as `make slides` does); only a machine without npm skips, saying so.
"""
import importlib.util, re, shutil, subprocess, sys
from pathlib import Path
import pytest

import headless

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location('course_slides', ROOT / 'slides' / 'build.py')
slides = importlib.util.module_from_spec(_spec)  # slides/build.py, under a name no installed package uses
sys.modules['course_slides'] = slides
_spec.loader.exec_module(slides)
from offline import remote_assets  # noqa: E402  (slides/offline.py, put on the path by slides/build.py)


def _reveal():
    "Install reveal.js from the lock file when it is missing; skip only where npm is absent."
    if (slides.REVEAL / 'dist' / 'reveal.js').exists(): return
    if shutil.which('npm') is None: pytest.skip('npm is not installed: reveal.js (slides/package-lock.json) cannot be installed')
    p = subprocess.run(['npm', 'ci', '--no-audit', '--no-fund'], cwd=ROOT / 'slides', capture_output=True, text=True)
    assert p.returncode == 0, f'npm ci in slides/ failed: {p.stderr[-1500:]}'


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    "Every deck, built once into a temporary folder."
    _reveal()
    out, stage = tmp_path_factory.mktemp('slides'), tmp_path_factory.mktemp('stage')
    files = slides.build(out=out, stage=stage, log=lambda *a: None)
    return out, stage, files


def test_every_deck_builds(built):
    out, stage, files = built
    names = {d.name for d in slides.decks()}
    assert len(names) >= 7 and {'overview', 'reward-shaping', 'validation-probe', 'sandbox-tools', 'inner-grpo',
                                'outer-lora-grpo', 'transfer-eval'} <= names
    assert {p.stem for p in files} == names | {'index'}
    for name in names:
        html = (out / f'{name}.html').read_text()
        md = (stage / f'{name}.md').read_text()
        chunks = [c for c in slides.split_slides(md.split('---\n', 2)[2]) if c.strip()]
        assert len(chunks) >= 8, f'{name}: only {len(chunks)} slides'
        assert all('::: notes' in c for c in chunks), f'{name}: a slide without speaker notes'
        assert html.count('<aside class="notes">') == len(chunks), name  # every slide's notes reached the HTML
        assert len(re.findall(r'Quiz \d: check yourself', md)) >= 2, f'{name}: fewer than 2 quiz questions'
        assert '**Answer' in md and 'nbs/quizzes/' in md, f'{name}: quiz answers belong in the notes'
        assert '```python' in md and 'agentforge/' in md, f'{name}: no code excerpt'
        assert 'data:image/png;base64,' in html, f'{name}: no figure embedded'
        assert re.search(r'Source: [^\n]*(results/|computed at build time)', md), f'{name}: no slide names its source'


def test_no_deck_names_a_remote_asset(built):
    out, _, files = built
    for p in files:
        text = p.read_text()
        assert remote_assets(text) == [], p.name
        # everything is embedded: no asset points at a local file either, so a deck can be copied anywhere alone
        local = [u for u in re.findall(r'(?:src|href)="([^"#][^"]*)"', text)
                 if not u.startswith(('data:', 'http')) and not u.endswith('.html') and '${' not in u and "'+" not in u]
        assert local == [], (p.name, local[:5])


def test_the_offline_rule_catches_remote_assets():
    "The scanner is not a check that cannot fail: it finds URLs in asset positions, also inside embedded data: CSS."
    import base64
    css = base64.b64encode(b'@import url("https://fonts.example/x.css");').decode()
    page = (f'<link rel="stylesheet" href="data:text/css;base64,{css}"><img data-src="http://cdn.example/a.png">'
            '<p>cited in prose: https://arxiv.org/abs/2501.00001</p><math xmlns="http://www.w3.org/1998/Math/MathML">')
    assert remote_assets(page) == ['http://cdn.example/a.png', 'https://fonts.example/x.css']


def test_a_missing_results_file_fails_the_build(tmp_path, monkeypatch):
    "A deck never quietly drops a number: a results file or key that is not there stops the build, naming it."
    deck = tmp_path / '99-broken.md'
    deck.write_text('---\ntitle: broken\n---\n\n## A slide\n\n{{ load("results/no-such-run/metrics.json").x }}\n\n'
                    '::: notes\nn\n:::\n')
    with pytest.raises(slides.BuildError, match='results/no-such-run/metrics.json'):
        slides.render(slides.Deck(deck))
    deck.write_text('---\ntitle: broken\n---\n\n## A slide\n\n{{ load("results/grid/grid.json")[0].no_such_key }}\n\n'
                    '::: notes\nn\n:::\n')
    with pytest.raises(slides.BuildError, match='no_such_key'):
        slides.render(slides.Deck(deck))
    deck.write_text('---\ntitle: broken\n---\n\n## No notes here\n\ntext\n')
    with pytest.raises(slides.BuildError, match='no speaker notes'):
        slides.render(slides.Deck(deck))


@pytest.mark.browser
def test_chromium_renders_a_deck_offline(built, tmp_path):
    why = headless.cannot_start()
    if why: pytest.skip(why)
    out, _, _ = built
    url = (out / 'reward-shaping.html').as_uri() + '#/5'
    page = headless.render(url, tmp_path / 'deck.png')
    assert re.search(r'<div class="reveal[^"]*"', page) and 'class="slides"' in page
    assert re.search(r'<section[^>]*class="[^"]*present', page), 'reveal.js did not start: no slide is shown'
    ink = headless.ink(tmp_path / 'deck.png')
    assert ink['ink'] > 0.05 and ink['colours'] > 200, f'the deck rendered blank: {ink}'
    headless.keep(tmp_path / 'deck.png', 'deck-reward-shaping.png')
