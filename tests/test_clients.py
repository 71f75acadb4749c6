"""The capstone's synthetic clients (lesson 13d_capstone): the shipped files are what the generator writes, every
row registers, no eval dialogue is also a train one, and every answer is a turn of the client's own guide."""
import json
from pathlib import Path
import pytest
from agentforge.clients import CLIENTS, client_rows, write_client
from agentforge.registry import read_rows
from agentforge.support import kb_rows

SHIPPED = Path(__file__).resolve().parents[1] / 'examples' / 'clients'

@pytest.mark.parametrize('name', list(CLIENTS))
def test_shipped_files_are_what_the_generator_writes(name, tmp_path):
    d = write_client(name, tmp_path / name)
    for f in ('train.jsonl', 'eval.jsonl', 'guide.md', 'brief.txt'):
        assert (SHIPPED / name / f).read_bytes() == (d / f).read_bytes(), f'examples/clients/{name}/{f} is stale'

@pytest.mark.parametrize('name', list(CLIENTS))
def test_rows_register_are_disjoint_and_answer_from_the_guide(name):
    tr, ev = (read_rows(SHIPPED / name / f) for f in ('train.jsonl', 'eval.jsonl'))
    assert len(tr) == len(ev) == 256
    key = lambda r: json.dumps(r['prompt'])
    assert len({key(r) for _, r in ev}) == 256 and not {key(r) for _, r in tr} & {key(r) for _, r in ev}
    turns = {r['turn'] for r in kb_rows(kb=CLIENTS[name]['kb'])}
    assert {r['answer'] for _, r in tr + ev} <= turns

def test_too_many_dialogues_for_a_guide_is_an_error():
    with pytest.raises(ValueError, match='distinct dialogues'):
        client_rows({'x': dict(name='x', models=('x',), symptoms={'s': dict(says=('my {m}',), tree='Fix it.')})},
                    n=10_000, seed=0)
