"""The README's architecture section is true of the code: every module sits on one floor, and no module imports from a
floor above its own (data flows one way: brief → workspace → probe → pool → inner → grading → outer)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / 'agentforge'

def floors() -> dict:
    "module -> floor index, read from the README's floors table."
    text = (ROOT / 'README.md').read_text()
    block = text[text.index('## Architecture'):]
    block = block[:block.index('\n## ', 1)]
    rows = [l for l in block.splitlines() if l.startswith('| ') and not l.startswith(('| floor', '|---'))]
    return {m: i for i, row in enumerate(rows) for m in re.findall(r'`(\w+)` \(\d\d\w?\)', row.split('|')[2])}

def imports(path:Path) -> set:
    src = path.read_text()
    found = re.findall(r'^\s*from \.(\w+) import|^\s*from agentforge\.(\w+) import|^\s*import agentforge\.(\w+)', src, re.M)
    return {next(x for x in f if x) for f in found}

def test_every_module_has_a_floor():
    fl = floors()
    modules = {p.stem for p in PKG.glob('*.py') if not p.stem.startswith('_')}
    assert modules - set(fl) == set(), f'modules missing from the README architecture table: {modules - set(fl)}'
    assert set(fl) - modules == set(), f'the README names modules that do not exist: {set(fl) - modules}'

def test_no_module_imports_from_a_floor_above():
    fl = floors()
    up = sorted((m, d) for m in fl for d in imports(PKG / f'{m}.py') if d in fl and fl[d] > fl[m])
    assert not up, f'imports against the data flow (module, imported from a higher floor): {up}'

def test_the_parser_sees_real_imports():
    "The parser finds imports that exist (outer imports config, tasks imports durable), so an empty result means something."
    fl = floors()
    assert 'config' in imports(PKG / 'outer.py') and fl['config'] <= fl['outer'] and 'durable' in imports(PKG / 'tasks.py')
