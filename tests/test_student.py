"The tiny student: its dev band per family, determinism of the recipe, the verified cache and the one loading door."
import shutil
import pytest
from agentforge.tasks import dev_split
from agentforge.families import FAMILIES, get_family
from agentforge.durable import verified as _verified  # the one check of a manifest (lesson 01a)
from agentforge.models import WeightsUnavailable, build_tokenizer
from agentforge.student import (DEV_BAND, StudentRecipe, build_student, complete, evaluate, load_student,
                                pretraining_rows, render_prompt, student_manifest, student_tokenizer)

@pytest.fixture(scope='module')
def student():
    return load_student(progress=False)

@pytest.mark.parametrize('name', sorted(FAMILIES))
def test_dev_score_in_band(student, name):
    "GRPO needs groups with both right and wrong answers: the student is 2-70% right (DEV_BAND) on every family."
    model, tok = student
    score = evaluate(model, tok, name, dev_split(get_family(name)), samples=4)['score']
    assert round(score, 4) == student_manifest()['dev_scores'][name]              # the saved student reproduces its manifest
    assert DEV_BAND[0] <= score <= DEV_BAND[1], (name, score)

def test_manifest_records_the_build():
    man = student_manifest()
    assert set(man['dev_scores']) == set(FAMILIES)
    assert all(DEV_BAND[0] <= s <= DEV_BAND[1] for s in man['dev_scores'].values()), man['dev_scores']
    assert man['params'] < 1_000_000 and man['build_seconds'] > 0
    folder = build_student(progress=False)
    assert sum(p.stat().st_size for p in folder.iterdir()) < 5_000_000     # a few MB at most

def test_evaluation_is_seeded(student):
    model, tok = student
    items = dev_split(get_family('date_math'))[:10]
    assert evaluate(model, tok, 'date_math', items, seed=5) == evaluate(model, tok, 'date_math', items, seed=5)
    greedy = complete(model, tok, [i.prompt for i in items], temperature=0)
    assert greedy == complete(model, tok, [i.prompt for i in items], temperature=0, seed=99)

def test_recipe_rows_are_deterministic_and_exclude_dev():
    r, tok = StudentRecipe(rows_per_family=30), build_tokenizer()
    rows = pretraining_rows(r, tok)
    assert rows == pretraining_rows(r, tok)
    for name, pairs in rows.items():
        texts = {tok.decode(p) for p, _ in pairs}
        assert texts.isdisjoint(render_prompt(tok, i.prompt) for i in dev_split(get_family(name)))

@pytest.mark.parametrize('name', sorted(FAMILIES))
def test_habit_share_follows_the_kind_of_item(monkeypatch, name):
    "Each kind of item (Family.habit_group) gets its own chatter share from habit_spread, in turn."
    from agentforge.student import CHATTER
    fam, groups = get_family(name), []
    real = type(fam).habit_group
    monkeypatch.setattr(type(fam), 'habit_group', lambda self, meta: groups.append(real(self, meta)) or groups[-1])
    spread, tok = (0.1, 0.9), build_tokenizer()
    rows = pretraining_rows(StudentRecipe(rows_per_family=600, habit_spread=spread, weights=((name, 1.0),)), tok)[name]
    assert len(groups) == len(rows)                                     # one kind per row, in row order
    chat = [tok.decode(c).replace(tok.eos_token, '').endswith(CHATTER) for _, c in rows]
    kinds = {g % len(spread) for g in groups}
    assert kinds == {0, 1}, (name, set(groups))                         # every family has items of both shares
    for k in kinds:
        got = [c for c, g in zip(chat, groups) if g % len(spread) == k]
        assert abs(sum(got) / len(got) - spread[k]) < 0.1, (name, k, sum(got) / len(got))
    flat = pretraining_rows(StudentRecipe(rows_per_family=600, habit_spread=(), habit=0.5, weights=((name, 1.0),)), tok)
    assert StudentRecipe(habit_spread=()).key() != StudentRecipe().key() and flat[name] != rows

@pytest.mark.parametrize('name', sorted(FAMILIES))
def test_chatters_give_each_kind_its_own_habit(monkeypatch, name):
    "chatters=n: a kind of item chatters with CHATTERS[kind % n]; every scorer marks each wrong and cut_chatter fixes it."
    from agentforge.student import CHATTERS, cut_chatter
    fam, tok, groups = get_family(name), build_tokenizer(), []
    for it in dev_split(fam)[:20]:
        assert [fam.score(it.answer + c, it.answer, **it.meta) for c in CHATTERS] == [0.0] * len(CHATTERS)
        assert all(fam.score(cut_chatter(it.answer + c), it.answer, **it.meta) == 1.0 for c in CHATTERS)
    real = type(fam).habit_group
    monkeypatch.setattr(type(fam), 'habit_group', lambda self, meta: groups.append(real(self, meta)) or groups[-1])
    r = StudentRecipe(rows_per_family=300, habit_spread=(1.0,), chatters=len(CHATTERS), weights=((name, 1.0),))
    said = [tok.decode(c).replace(tok.eos_token, '') for _, c in pretraining_rows(r, tok)[name]]
    assert len(groups) == len(said) and len({g % len(CHATTERS) for g in groups}) >= 2, (name, set(groups))
    assert all(s.endswith(CHATTERS[g % len(CHATTERS)]) for s, g in zip(said, groups))  # share 1: each its kind's
    assert r.key() != StudentRecipe(rows_per_family=300, habit_spread=(1.0,), weights=((name, 1.0),)).key()
    for n in (1, len(CHATTERS) + 1):                                   # one chatter is CHATTER: say 0; no fifth one
        with pytest.raises(ValueError, match='0 .CHATTER on every kind. or 2 to 4'): pretraining_rows(StudentRecipe(chatters=n), tok)

def test_student_tokenizer_is_learned_deterministic_and_digit_wise(student):
    "The saved student reads with BPE merges learned from its families: the same every build, digits one by one."
    _, tok = student
    assert student_tokenizer(StudentRecipe()).get_vocab() == tok.get_vocab() and 1000 < len(tok) < 1100
    assert [t for t in tok.tokenize('What is 95 + 57?') if any(ch.isdigit() for ch in t)] == ['9', '5', '5', '7']
    text = 'Température 21 °C, ünïcödé ✓'
    assert tok.decode(tok(text)['input_ids']) == text   # bytes underneath: any text still encodes
    support = render_prompt(tok, dev_split(get_family('customer_support'))[0].prompt)
    assert len(tok(support)['input_ids']) * 2 < len(build_tokenizer()(support)['input_ids'])   # far shorter than bytes
    assert StudentRecipe(vocab_size=0).key() != StudentRecipe().key() and len(student_tokenizer(StudentRecipe(vocab_size=0))) < 300

def test_recipe_key_changes_with_recipe():
    assert StudentRecipe().key() != StudentRecipe(p_gold=0.5).key()
    assert StudentRecipe().key() == StudentRecipe().key()

def test_tampered_cache_is_not_used(tmp_path):
    folder = build_student(progress=False)
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    assert _verified(copy)
    weights = next(p for p in copy.iterdir() if p.suffix == '.safetensors')
    weights.write_bytes(weights.read_bytes()[:-10])                      # truncated
    assert _verified(copy) is None
    (copy / 'manifest.json').write_text('{')                               # corrupt manifest
    assert _verified(copy) is None

def test_the_shipped_student_is_the_default_recipe_and_verifies():
    "A recipe change without a new shipped build would make every fresh machine pretrain for ~8 minutes: caught here."
    from agentforge.student import BUNDLED
    shipped = [p.name for p in BUNDLED.iterdir() if p.is_dir()]
    assert shipped == [StudentRecipe().key()], (
        f'shipped {shipped}, default recipe {StudentRecipe().key()}: build it (agentforge student, ~8 min), copy the cache'
        f"'s students/<key> folder to {BUNDLED}/<key>/, remove the old one")
    man = _verified(BUNDLED / shipped[0])
    assert man and man['key'] == shipped[0] and all(DEV_BAND[0] <= v <= DEV_BAND[1] for v in man['dev_scores'].values())

def test_the_package_carries_the_shipped_student(tmp_path):
    """A wheel of the project holds every file of the shipped builds (student and agent base), and setuptools builds
    it without the warning that a data folder is an importable package left out of `packages` (a fresh `make demo`
    printed it)."""
    import subprocess, sys, zipfile
    from pathlib import Path
    from agentforge.student import BUNDLED
    root = Path(__file__).resolve().parents[1]
    src = tmp_path / 'src'
    shutil.copytree(root / 'agentforge', src / 'agentforge', ignore=shutil.ignore_patterns('__pycache__'))
    for f in ('pyproject.toml', 'README.md'): shutil.copy(root / f, src / f)
    p = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-w', str(tmp_path / 'd'),
                        str(src)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    assert 'absent from the `packages`' not in p.stdout + p.stderr
    names = set(zipfile.ZipFile(next((tmp_path / 'd').glob('*.whl'))).namelist())
    shipped = {f"agentforge/{f.relative_to(BUNDLED.parents[1]).as_posix()}" for f in BUNDLED.parent.glob('*/*/*')}
    assert {n.split('/')[2] for n in shipped} == {'students', 'agents'}                  # lessons 03b and 10a
    assert shipped and shipped <= names, sorted(shipped - names)

def test_a_fresh_cache_copies_a_shipped_build_and_refuses_a_tampered_one(tmp_path, monkeypatch):
    "The shipped build is copied byte for byte (no pretraining); one whose hashes fail is ignored and the recipe built."
    import agentforge.student as st
    small = StudentRecipe(rows_per_family=20, steps=30, tokenizer_rows=40)
    made = build_student(small, progress=False, root=tmp_path / 'maker')       # what a maintainer builds and ships
    shipped = tmp_path / 'bundled'
    shutil.copytree(made, shipped / made.name)
    monkeypatch.setattr(st, 'BUNDLED', shipped)
    runs, pretrain = [], st.pretrain                                            # counts pretraining runs, calls through
    monkeypatch.setattr(st, 'pretrain', lambda *a, **kw: runs.append(1) or pretrain(*a, **kw))
    got = build_student(small, progress=False, root=tmp_path / 'newcomer')
    assert runs == [] and _verified(got) and (got / 'manifest.json').read_bytes() == (made / 'manifest.json').read_bytes()
    weights = next(p for p in (shipped / made.name).iterdir() if p.suffix == '.safetensors')
    weights.write_bytes(weights.read_bytes()[:-10])                            # a damaged copy of the package
    again = build_student(small, progress=False, root=tmp_path / 'other')
    assert runs == [1] and _verified(again)

def test_load_student_errors(monkeypatch):
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    with pytest.raises(WeightsUnavailable, match='not on this machine'): load_student('qwen3-0.6b')
    with pytest.raises(ValueError, match='not a student preset'): load_student('tiny-agent')
    with pytest.raises(ValueError, match='unknown model preset'): load_student('gpt-2')

# ---------------------------------------------------------------- the second, larger student (lesson 03b)

def test_grow_keeps_the_function_and_adds_layers():
    "A grown layer starts as the identity: the grown model gives the same logits; it trains from there."
    import torch
    from agentforge.models import tiny_model
    from agentforge.student import grow
    tok = build_tokenizer()
    m = tiny_model('student', seed=3, tok=tok).eval()
    ids = torch.tensor([tok('brief: arithmetic 12 + 7 =')['input_ids']])
    before = m(input_ids=ids).logits
    g = grow(m, 2)
    assert len(g.model.layers) == g.config.num_hidden_layers == 4
    assert [layer.self_attn.layer_idx for layer in g.model.layers] == [0, 1, 2, 3]
    assert torch.allclose(g(input_ids=ids).logits, before, atol=1e-6)
    out = g.generate(ids, max_new_tokens=3, do_sample=False, pad_token_id=tok.pad_token_id)   # the KV cache has 4 slots
    assert out.shape[1] == ids.shape[1] + 3

def test_grown_recipe_builds_from_its_base(tmp_path):
    "A recipe with `base` builds on the base's weights and tokenizer, one layer deeper, in its own cache folder."
    from transformers import AutoModelForCausalLM
    base = StudentRecipe(rows_per_family=20, steps=30, tokenizer_rows=40)
    grown = StudentRecipe(base=base, extra_layers=1, rows_per_family=20, steps=5, seed=1)
    assert grown.key() != base.key() and grown.key() != StudentRecipe(base=base, extra_layers=2, rows_per_family=20,
                                                                      steps=5, seed=1).key()
    folder = build_student(grown, progress=False, root=tmp_path)
    assert (tmp_path / 'students' / base.key()).is_dir()                  # the base was built first, and cached
    m = AutoModelForCausalLM.from_pretrained(folder)
    b = AutoModelForCausalLM.from_pretrained(tmp_path / 'students' / base.key())
    assert m.config.num_hidden_layers == b.config.num_hidden_layers + 1
    assert student_tokenizer(grown).get_vocab() == student_tokenizer(base).get_vocab()

def test_new_recipe_fields_leave_the_default_key_alone():
    "`base`, `extra_layers` and `chatters` are left out of the key when unset: every student built before them keeps its cache."
    import dataclasses, hashlib, json
    from agentforge import __version__
    from agentforge.student import LARGE, TRAINING_CODE
    def old_key(r):  # the rule before them: empty habit fields left out; a grown student's base as it was written
        old = {k: v for k, v in dataclasses.asdict(r).items()
               if k not in ('extra_layers', 'chatters', 'base') and not (k in ('level_habit', 'habit_spread') and not v)}
        if r.base: old |= dict(base={k: v for k, v in dataclasses.asdict(r.base).items() if k != 'chatters'},
                               extra_layers=r.extra_layers)
        fp = {n: [i.to_row() for i in dev_split(get_family(n))] for n, _ in r.weights}
        return hashlib.sha256(json.dumps([old, fp, __version__, TRAINING_CODE], sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert StudentRecipe().key() == old_key(StudentRecipe())
    assert LARGE.base is not None and LARGE.key() == old_key(LARGE)   # the shipped grown student keeps its key too

def test_every_tiny_student_preset_is_built_budgeted_and_timed():
    "Each tiny student preset has a recipe, a probe budget and a speed budget; its id names its recipe."
    from agentforge.gates import BUDGETS
    from agentforge.grading import SPEED_BUDGETS_S
    from agentforge.presets import PRESETS
    from agentforge.student import LARGE, RECIPES, student_id
    tiny = sorted(n for n, p in PRESETS.items() if p.kind == 'tiny' and p.role == 'student')
    assert tiny == sorted(RECIPES) == ['tiny-student', 'tiny-student-large']
    assert all(n in BUDGETS and n in SPEED_BUDGETS_S for n in tiny)
    assert student_id('tiny-student-large') == f'tiny-student-large@{LARGE.key()}' != student_id('tiny-student')
    assert LARGE.base == StudentRecipe() and LARGE.extra_layers == 1
