"""Every retro follows the house format, is in the index with its own front matter, and is linked from its lesson."""
import json, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
RETROS = ROOT / 'retros'
FILES = sorted(p for p in RETROS.glob('*.md') if p.name != 'README.md')
HEADINGS = ('Summary', 'Impact', 'Symptoms & metrics', 'Root cause', 'Trigger', 'Detection', 'Resolution',
            'Reproduction', 'Action items', 'Lessons', 'Timeline')  # CONVENTIONS.md, in this order
SEVERITIES, STATUSES = ('low', 'medium', 'high', 'critical'), ('open', 'resolved', 'mitigated')
LINK = re.compile(r'\]\(([^)\s]+)\)')

def front_matter(text:str) -> dict:
    "The `key: value` lines between the opening and closing `---` (quotes around a value removed)."
    m = re.match(r'---\n(.*?)\n---\n', text, re.S)
    assert m, 'no front matter: the file must start with --- / key: value lines / ---'
    return {k.strip(): v.strip().strip('"\'') for k, v in (l.split(':', 1) for l in m.group(1).splitlines() if ':' in l)}

def headings(text:str) -> list: return [l[3:].strip() for l in text.splitlines() if l.startswith('## ')]

def canonical(h:str) -> str|None:
    "The house heading `h` is (it may go on: 'Resolution (partial)', 'Timeline (UTC)'), or None for an extra section."
    return next((c for c in HEADINGS if h == c or re.match(re.escape(c) + r'\b[ :(]', h)), None)

def index_rows() -> dict:
    "The index's table rows by file name: {name: [date, title link, lesson, severity, status, finding, reproduction]}."
    rows = {}
    for line in (RETROS / 'README.md').read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        m = re.search(r'\]\(([\w.-]+\.md)\)', cells[1]) if len(cells) >= 7 else None
        if m:
            assert m.group(1) not in rows, f'{m.group(1)} is listed twice'
            rows[m.group(1)] = cells
    return rows

def lesson_links(lesson:str) -> str:
    "The text of every markdown cell of `nbs/{lesson}.ipynb`."
    nb = json.loads((ROOT / 'nbs' / f'{lesson}.ipynb').read_text())
    return '\n'.join(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'markdown')

def test_there_are_retros(): assert len(FILES) >= 10

@pytest.mark.parametrize('path', FILES, ids=lambda p: p.stem)
def test_front_matter(path):
    fm = front_matter(path.read_text())
    assert set(fm) >= {'title', 'date', 'lesson', 'severity', 'status'}, sorted(fm)
    assert path.name.startswith(fm['date'] + '-') and re.fullmatch(r'\d{4}-\d{2}-\d{2}', fm['date']), fm['date']
    assert (ROOT / 'nbs' / f"{fm['lesson']}.ipynb").exists(), f"lesson {fm['lesson']!r} is no notebook in nbs/"
    assert fm['severity'] in SEVERITIES and fm['status'] in STATUSES, (fm['severity'], fm['status'])
    assert fm['title']

@pytest.mark.parametrize('path', FILES, ids=lambda p: p.stem)
def test_house_headings_in_order(path):
    found = [c for c in map(canonical, headings(path.read_text())) if c]
    assert found == list(HEADINGS), f'house headings found, in order: {found}; expected {list(HEADINGS)}'

@pytest.mark.parametrize('path', FILES, ids=lambda p: p.stem)
def test_listed_in_the_index_as_its_front_matter_says(path):
    fm, rows = front_matter(path.read_text()), index_rows()
    assert path.name in rows, f'{path.name} is not in retros/README.md'
    date, _, lesson, severity, status, finding, repro = rows[path.name][:7]
    assert (date, lesson.strip('`'), severity, status) == (fm['date'], fm['lesson'], fm['severity'], fm['status'])
    assert finding and repro

def test_index_lists_only_retros_that_exist():
    assert sorted(index_rows()) == [p.name for p in FILES]

@pytest.mark.parametrize('path', FILES, ids=lambda p: p.stem)
def test_linked_from_its_lesson(path):
    lesson = front_matter(path.read_text())['lesson']
    assert re.search(r'\]\(\.\./retros/' + re.escape(path.name) + r'(#[^)]*)?\)', lesson_links(lesson)), \
        f'no markdown cell of nbs/{lesson}.ipynb links ../retros/{path.name}'

@pytest.mark.parametrize('path', FILES + [RETROS / 'README.md'], ids=lambda p: p.stem)
def test_relative_links_resolve(path):
    text = path.read_text()
    bad = [t for t in LINK.findall(text) if not re.match(r'[a-z]+:', t) and not t.startswith('#')
           and not (path.parent / t.split('#')[0]).exists()]
    assert not bad, f'links to files that do not exist: {bad}'

@pytest.mark.parametrize('path', FILES, ids=lambda p: p.stem)
def test_cited_documents_are_linked(path):
    "A retro that cites the spec contract or the security model links the project's own copy."
    text = path.read_text()
    for doc in ('TASK_SPEC.md', 'SECURITY.md'):
        if doc in text: assert f'](../docs/{doc})' in text, f'{path.name} cites {doc} without linking ../docs/{doc}'
