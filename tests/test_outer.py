"""agentforge.outer (and the objective it imports, agentforge.grpo): advantages and loss against hand-computed numbers, masking, LoRA-only updates, tied groups that
skip the step, and a SIGKILLed run that resumes to the same metrics and adapter as an uninterrupted one."""
import dataclasses, os, subprocess, sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
import pytest, torch
from agentforge import grpo, outer
from agentforge.grpo import Sample, collate, group_advantages, pg_loss, samples_from, token_logprobs
from agentforge.agents import CHOICES, write_spec
from agentforge.episode import brief_messages
from agentforge.outer import OuterConfig, jobs_for_step, make_optimizer, read_metrics, train, update
from agentforge.durable import ResumeMismatch

CFG = OuterConfig(steps=4, group_size=4, briefs_per_step=2, learning_rate=2e-2, micro_batch=3,
                  families=('arithmetic', 'string_ops', 'date_math'))
N_TOKENS = 6

def tiny_agent(seed:int=0):
    "The tiny Qwen3 agent model with a rank-4 LoRA adapter, the byte-level tokenizer, temperature 1."
    import peft
    from agentforge.models import build_tokenizer, lora_config, tiny_model
    m = tiny_model('agent', seed)  # seeds torch, so the LoRA init that follows is seeded too
    return SimpleNamespace(model=peft.get_peft_model(m, lora_config(m, r=4, alpha=8)), tok=build_tokenizer(), temperature=1.0)

@dataclass
class Record:
    "The fields of an episode record that the outer loop reads."
    brief:str; seed:int; turns:list; reward:dict; validated_on:int|None = None; attempts:int = 1; tokens:int = 0
    seconds:dict = field(default_factory=lambda: dict(agent=0.0, probe=0.0, inner=0.0)); inner:dict|None = None

def rollout(agent, jobs, step):
    """A test rollout (the real one is `episode.run_episodes`, wired by the lead): per job, sample N_TOKENS tokens
    after a short prompt with torch, seeded by the job's seed, record prompt_ids/completion_ids/logprobs, and score
    reward = share of the completion made of chosen bytes (the lowercase ASCII letters)."""
    letters, out = set(agent.tok.convert_tokens_to_ids(list('abcdefghijklmnopqrstuvwxyz'))), []
    for brief, seed in jobs:
        g, prompt = torch.Generator().manual_seed(seed), agent.tok.encode(f'{brief}:')
        ids, lps = list(prompt), []
        with torch.no_grad():
            for _ in range(N_TOKENS):
                lp = agent.model(input_ids=torch.tensor([ids])).logits[0, -1].float().log_softmax(-1)
                t = int(torch.multinomial(lp.exp(), 1, generator=g)); ids.append(t); lps.append(float(lp[t]))
        comp = ids[len(prompt):]; r = sum(t in letters for t in comp) / N_TOKENS
        out.append(Record(brief, seed, [dict(prompt_ids=prompt, completion_ids=comp, logprobs=lps)],
                          dict(total=r, validation=1.0, uplift=r, speed=0.0), validated_on=1, tokens=N_TOKENS))
    return out

pytestmark = pytest.mark.usefixtures('one_thread')  # tests/conftest.py

def close(a, b, eps:float=1e-6):
    "Assert `a` is within `eps` of `b` (numbers or nested lists, against a tensor or a number)."
    torch.testing.assert_close(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64), rtol=0, atol=eps)

def _lora(agent) -> dict: return {n: p.detach().clone() for n, p in agent.model.named_parameters() if 'lora_' in n}
def _drop_seconds(rows) -> list: return [{k: v for k, v in r.items() if not k.startswith('seconds')} for r in rows]

def test_advantages_by_hand():
    close(group_advantages(torch.tensor([1., 0., 0., 0.])), [0.75 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001])
    close(group_advantages(torch.tensor([1., 0., 0., 0.]), 'none'), [0.75, -0.25, -0.25, -0.25])
    close(group_advantages(torch.tensor([[0.2, 0.8], [3., 3.]])), [[-0.3 / (0.6 / 2 ** 0.5 + 1e-4), 0.3 / (0.6 / 2 ** 0.5 + 1e-4)], [0, 0]])
    assert group_advantages(torch.full((8,), 0.7)).tolist() == [0.0] * 8   # r - mean is 6e-8 here, not 0
    assert group_advantages(torch.tensor([0.4])).tolist() == [0.0]
    with pytest.raises(ValueError): group_advantages(torch.tensor([1., 0.]), 'max')

def test_loss_by_hand_with_clipping():
    logp = torch.tensor([[0.0, 0.5, -0.5, 9.0], [0.5, -0.5, 0.0, 0.0]])
    mask, adv, old = torch.tensor([[1., 1, 1, 0], [1, 1, 0, 0]]), torch.tensor([1., -2.]), torch.zeros(2, 4)
    loss, st = pg_loss(logp, old, adv, mask, clip_eps=0.2)
    # token terms: 1, min(1.6487, 1.2)=1.2 (clipped), 0.6065 | min(-3.2974, -2.4)=-3.2974, min(-1.2131, -1.6)=-1.6 (clipped)
    close(loss.item(), 0.41818238)
    assert (st['tokens'], st['clip_frac'], 'kl' in st) == (5, 0.4, False)
    loss2, st2 = pg_loss(logp, old, adv, mask, clip_eps=0.2, ref_logp_BT=torch.zeros(2, 4), beta=0.1)
    k3 = 2 * (torch.exp(torch.tensor(-0.5)) + 0.5 - 1) + 2 * (torch.exp(torch.tensor(0.5)) - 0.5 - 1)  # e^(ref-logp) - (ref-logp) - 1
    close(st2['kl'], k3.item() / 5)
    close(loss2.item(), 0.41818238 + 0.1 * k3.item() / 5)

def test_samples_and_collate():
    t = lambda p, c: dict(prompt_ids=p, completion_ids=c, logprobs=[-0.5] * len(c))
    groups = [[Record('arithmetic', 0, [t([1, 2], [3]), dict(prompt_ids=None, completion_ids=None, logprobs=None), t([1, 2, 3, 4], [5, 6])], dict(total=1.0)),
               Record('arithmetic', 1, [t([1], [9])], dict(total=0.0))], [Record('date_math', 2, [t([1], [2])], dict(total=0.3)),
               Record('date_math', 3, [t([1], [2])], dict(total=0.3))]]
    s = samples_from(groups)
    assert [(x.episode, x.completion_ids) for x in s] == [(0, [3]), (0, [5, 6]), (1, [9])]
    assert s[0].advantage == s[1].advantage == -s[2].advantage > 0
    b = collate(s, pad_id=0)
    assert b['input_ids_BT'].tolist() == [[1, 2, 3, 0, 0, 0], [1, 2, 3, 4, 5, 6], [1, 9, 0, 0, 0, 0]]
    assert b['loss_mask_BT'].tolist() == [[0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 1], [0, 1, 0, 0, 0, 0]]
    assert b['attention_mask_BT'].tolist() == [[1, 1, 1, 0, 0, 0], [1] * 6, [1, 1, 0, 0, 0, 0]]
    assert b['old_logp_BT'][1, 4:].tolist() == [-0.5, -0.5] and b['old_logp_BT'][1, :4].abs().sum() == 0

def test_negative_weight_scales_what_fell_below_the_group():
    "negative_weight=1 is GRPO; 0 keeps only the turns that beat their group (drops the rest); between, it scales."
    t = lambda c: dict(prompt_ids=[1], completion_ids=[c], logprobs=[-0.5])
    group = [[Record('arithmetic', k, [t(10 + k)], dict(total=r)) for k, r in enumerate((0.6, 0.5, 0.0, 0.3))]]
    full = {x.completion_ids[0]: x.advantage for x in samples_from(group)}
    half = {x.completion_ids[0]: x.advantage for x in samples_from(group, negative_weight=0.5)}
    none = {x.completion_ids[0]: x.advantage for x in samples_from(group, negative_weight=0.0)}
    assert sorted(k for k, a in full.items() if a < 0) == [12, 13] and sorted(none) == [10, 11]   # 0.0 and 0.3 < mean
    assert none == {k: a for k, a in full.items() if a > 0} and half == {k: a if a > 0 else a / 2 for k, a in full.items()}
    assert OuterConfig().negative_weight == 0.0
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match='negative_weight'): OuterConfig(negative_weight=bad)

def test_entropy_bonus_by_hand_and_it_spreads_the_policy():
    "pg_loss subtracts ent_coef x the masked mean entropy; token_logprobs' entropy is the tempered distribution's."
    logp, mask, adv, old = torch.zeros(1, 3), torch.tensor([[0., 1, 1]]), torch.tensor([1.]), torch.zeros(1, 3)
    ent = torch.tensor([[9.0, 0.5, 1.5]])                                       # position 0 is off the mask
    base, _ = pg_loss(logp, old, adv, mask)
    loss, st = pg_loss(logp, old, adv, mask, entropy_BT=ent, ent_coef=0.1)
    close(st['entropy'], 1.0)
    close(loss.item(), base.item() - 0.1 * 1.0)
    agent = tiny_agent()
    ids = torch.tensor([agent.tok.encode('arithmetic: abc')])
    lp, h = token_logprobs(agent.model, ids, torch.ones_like(ids), 2.0, entropy=True)
    close(lp, token_logprobs(agent.model, ids, torch.ones_like(ids), 2.0))   # the same log-probs either way
    with torch.no_grad(): p = (agent.model(input_ids=ids).logits[0, 3].float() / 2.0).softmax(-1)
    close(h[0, 4].item(), -(p * p.log()).sum().item(), eps=1e-4)
    recs = rollout(tiny_agent(), jobs_for_step(CFG, 0), 0)
    b = collate(samples_from([recs[:4], recs[4:]]), 0)
    def spread(coef):  # after 4 updates on the same step: the stats and the mean entropy over its sampled tokens
        agent = tiny_agent(); cfg = dataclasses.replace(CFG, entropy=coef, entropy_on='all', epochs=1)
        opt = make_optimizer(agent, cfg)
        for _ in range(4): st = update(agent, [recs[:4], recs[4:]], cfg, opt)
        with torch.no_grad(): _, h = token_logprobs(agent.model, b['input_ids_BT'], b['attention_mask_BT'], 1.0, True)
        return st, (h * b['loss_mask_BT']).sum().item() / b['loss_mask_BT'].sum().item()
    (off, h_off), (on, h_on) = spread(0.0), spread(1.0)
    assert 'entropy' not in off and on['entropy'] > 0                          # computed only when it is used
    assert h_on > h_off                                                         # the bonus kept the policy wider
    with pytest.raises(ValueError, match='entropy'): OuterConfig(entropy=-0.1)
    with pytest.raises(ValueError, match='entropy_on'): OuterConfig(entropy_on='knobs')
    falls = OuterConfig(entropy=1.0, entropy_steps=10)
    assert [outer.entropy_weight(falls, k) for k in (0, 5, 10, 20)] == [1.0, 0.5, 0.0, 0.0]

def _cloned_tokenizer(phrases:tuple=()):
    "A tokenizer learned, as the cloned agent's, from turns writing every CHOICES option (whole number tokens)."
    from agentforge.models import build_tokenizer
    byte_tok = build_tokenizer()
    texts = [byte_tok.apply_chat_template(brief_messages(b) + [dict(role='assistant', content=write_spec(b, {k: o}))],
                                          tokenize=False) for b in ('date_math', 'arithmetic') for k, os in CHOICES.items()
             for o in os]
    return build_tokenizer(texts * 8, vocab_size=1024, numbers=True, phrases=phrases)

def test_the_decision_bonus_acts_on_the_knob_values_only_and_keeps_them_open():
    "decision_mask marks the tokens that write a knob's value; the bonus there slows the policy's commitment."
    from agentforge.agents import LMAgent
    from agentforge.models import build_tokenizer, tiny_model
    byte_tok = build_tokenizer()
    with pytest.raises(ValueError, match="use 'all'"):   # bytes: '1.0e-5' and '1.0e-4' differ in their last byte
        outer.decision_keys(LMAgent(tiny_model('agent', seed=0, tok=byte_tok), byte_tok), ['arithmetic'])
    tok = _cloned_tokenizer()  # as the cloned agent's: whole number tokens
    make = lambda: LMAgent(tiny_model('agent', seed=0, tok=tok), tok, lora=dict(r=4, alpha=8))
    agent = make()
    keys = outer.decision_keys(agent, ['date_math', 'arithmetic'])
    p, c = outer._turn_ids(agent, 'arithmetic', {'level': 3, 'max_steps': 16, 'learning_rate': '3.0e-3'})
    m = outer.decision_mask(torch.tensor([p + c]), keys)[0, len(p):]
    assert tok.convert_ids_to_tokens([t for t, on in zip(c, m.tolist()) if on]) == ['3', '16', '3.0e-3']
    def taught(coef):  # P(learning rate 1.0e-4) after 3 updates that reward only it
        agent = make()
        turns = {o: outer._turn_ids(agent, 'date_math', {'learning_rate': o}) for o in CHOICES['learning_rate']}
        cfg = dataclasses.replace(CFG, learning_rate=1e-2, epochs=1, negative_weight=1.0, entropy=coef)
        opt = make_optimizer(agent, cfg)
        for _ in range(3):
            recs = [Record('date_math', 0, [dict(prompt_ids=p, completion_ids=c, logprobs=_lp(agent, p, c))],
                           dict(total=float(o == '1.0e-4'))) for o, (p, c) in turns.items()]
            st = update(agent, [recs], cfg, opt)
        return st, outer.policy_probe(agent, ['date_math'])['date_math']['learning_rate']['1.0e-4']
    (off, p_off), (on, p_on) = taught(0.0), taught(5.0)
    assert on['entropy'] > 0 and 'entropy' not in off and on['entropy_coef'] == 5.0
    assert p_on < p_off                                                          # the bonus held the choice open

def test_a_joint_step_size_is_one_token_and_one_decision():
    "CloneRecipe.joint: the steps and learning rate are one whole token (agents.STEP_SIZES), so one decision, not two."
    from agentforge.agents import LMAgent, STEP_SIZES
    from agentforge.models import build_tokenizer, tiny_model
    tok = _cloned_tokenizer(STEP_SIZES)
    agent = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, lora=dict(r=4, alpha=8))
    keys = outer.decision_keys(agent, ['date_math', 'arithmetic'])
    p, c = outer._turn_ids(agent, 'arithmetic', {'level': 3, 'max_steps': 16, 'learning_rate': '3.0e-3'})
    m = outer.decision_mask(torch.tensor([p + c]), keys)[0, len(p):]
    assert tok.convert_ids_to_tokens([t for t, on in zip(c, m.tolist()) if on]) == [
        '3', 'max_steps: 16, learning_rate: 3.0e-3']
    assert tok.decode(c, skip_special_tokens=False).count('max_steps: 16, learning_rate: 3.0e-3') == 1
    assert len(STEP_SIZES) == 12 and len(set(tok.convert_tokens_to_ids(list(STEP_SIZES)))) == 12  # 3 steps x 4 rates

def test_negative_on_decisions_pushes_down_only_the_knob_values(monkeypatch):
    "negative_on='decisions': a below-baseline turn carries loss only where it wrote a knob's value; one above, all."
    from agentforge.agents import LMAgent
    from agentforge.models import tiny_model
    tok = _cloned_tokenizer()
    agent = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, lora=dict(r=4, alpha=8))
    good, bad = ({'learning_rate': o} for o in ('3.0e-4', '3.0e-3'))
    recs = [Record('date_math', 0, [dict(prompt_ids=p, completion_ids=c, logprobs=_lp(agent, p, c))], dict(total=r))
            for (p, c), r in ((outer._turn_ids(agent, 'date_math', good), 1.0),
                              (outer._turn_ids(agent, 'date_math', bad), 0.0))]
    seen = []
    def spy(logp, old, adv_B, mask_BT, *a, **k):
        seen.append((adv_B.clone(), mask_BT.clone()))
        return pg_loss(logp, old, adv_B, mask_BT, *a, **k)
    monkeypatch.setattr(outer, 'pg_loss', spy)
    def masks(**kw):  # {sign of the advantage: the completion tokens that carry loss}
        seen.clear()
        cfg = dataclasses.replace(CFG, families=('date_math',), epochs=1, negative_weight=1.0, **kw)
        update(agent, [recs], cfg, make_optimizer(agent, cfg))
        (adv_B, m_BT), = seen
        return {float(a.sign()): tok.convert_ids_to_tokens(b['input_ids_BT'][i][m_BT[i].bool()].tolist())
                for b in [collate(samples_from([recs], negative_weight=1.0), tok.pad_token_id)]
                for i, a in enumerate(adv_B)}
    full = masks()
    dec = masks(negative_on='decisions')
    assert dec[1.0] == full[1.0] and len(full[1.0]) > 10             # the turn that beat its group: every token
    assert dec[-1.0] == ['2', '48', '3.0e-3'] and len(full[-1.0]) > 10  # the one below it: its level, steps, rate
    assert 'negative_on' not in OuterConfig().to_json()                # left out at its default: earlier hashes hold
    assert OuterConfig(negative_on='decisions').to_json()['negative_on'] == 'decisions'
    assert OuterConfig(**OuterConfig().to_json()) == OuterConfig()
    with pytest.raises(ValueError, match='negative_on'): OuterConfig(negative_on='knobs')

def test_masked_tokens_get_zero_gradient():
    logp = torch.randn(3, 7).requires_grad_()
    mask = (torch.rand(3, 7) > 0.5).float(); mask[0, 0] = 1
    old = logp.detach() + 0.3 * torch.randn(3, 7); old[mask == 0] = float('inf')   # even absurd values off the mask
    loss, _ = pg_loss(logp, old, torch.tensor([1.0, -0.5, 2.0]), mask)
    loss.backward()
    assert torch.isfinite(loss) and (logp.grad[mask == 0] == 0).all() and (logp.grad[mask == 1] != 0).any()
    # the model: tokens after a row's last completion token (attended, unmasked) leave the LoRA gradient unchanged
    agent = tiny_agent()
    with torch.no_grad():
        for n, p in agent.model.named_parameters():
            if 'lora_B' in n: p.normal_(0, 0.05)   # B starts at 0, which would hide A's gradient
    s = [Sample([5, 6, 7], [8, 9], [-1.0, -2.0], 1.0, 0), Sample([5, 6, 7, 8, 9, 10, 11], [12, 13], [-1.0, -1.0], -1.0, 1),
         Sample([5], [6], [-3.0], 0.5, 2)]
    def lora_grad(b):
        agent.model.zero_grad()
        pg_loss(token_logprobs(agent.model, b['input_ids_BT'], b['attention_mask_BT']), b['old_logp_BT'], b['adv_B'], b['loss_mask_BT'])[0].backward()
        return {n: p.grad.clone() for n, p in agent.model.named_parameters() if p.requires_grad}
    b = collate(s, agent.tok.pad_token_id); g1 = lora_grad(b)
    b['input_ids_BT'][0, 5:] = torch.tensor([40, 41, 42, 43]); b['attention_mask_BT'][0, 5:] = 1   # a tail after row 0's completion
    g2 = lora_grad(b)
    assert all(g.abs().sum() > 0 for g in g1.values())
    assert all(torch.equal(g2[n], g1[n]) for n in g1)   # bit for bit: causal attention never looks ahead

def test_update_trains_lora_only():
    agent = tiny_agent(); opt = make_optimizer(agent, CFG)
    base0 = {n: p.detach().clone() for n, p in agent.model.named_parameters() if not p.requires_grad}
    lora0 = _lora(agent); assert lora0 and all('lora_' in n for n, p in agent.model.named_parameters() if p.requires_grad)
    for step in (0, 1):   # LoRA B starts at 0, so A gets its first gradient on the second step
        recs = rollout(agent, jobs_for_step(CFG, step), step)
        st = update(agent, [recs[:4], recs[4:]], CFG, opt)
        assert not st['skipped'] and st['samples'] > 0 and st['grad_norm'] > 0
    moved = [n for n, p in _lora(agent).items() if not torch.equal(p, lora0[n])]
    assert sorted(moved) == sorted(lora0)
    assert all(torch.equal(p, base0[n]) for n, p in agent.model.named_parameters() if not p.requires_grad)

def test_equal_rewards_skip_the_step():
    agent = tiny_agent(); opt = make_optimizer(agent, CFG)
    recs = rollout(agent, jobs_for_step(CFG, 0)[:4], 0)
    for r in recs: r.reward['total'] = 0.25
    before = {n: p.detach().clone() for n, p in agent.model.named_parameters()}
    st = update(agent, [recs], CFG, opt)
    assert (st['skipped'], st['samples'], st['loss'], st['grad_norm']) == (True, 0, None, None)
    assert all(torch.equal(p, before[n]) for n, p in agent.model.named_parameters()) and not opt.state

def test_kl_reference_is_the_base():
    agent, cfg = tiny_agent(), dataclasses.replace(CFG, beta=0.5, epochs=1)
    opt = make_optimizer(agent, cfg); recs = rollout(agent, jobs_for_step(cfg, 0), 0)
    assert update(agent, [recs[:4], recs[4:]], cfg, opt)['kl'] == 0.0   # LoRA B = 0: the adapter is the base
    recs = rollout(agent, jobs_for_step(cfg, 1), 1)
    assert update(agent, [recs[:4], recs[4:]], cfg, opt)['kl'] > 0

def test_epochs_step_the_optimizer_each_and_let_the_clip_act():
    agent, one, three = tiny_agent(), dataclasses.replace(CFG, epochs=1), dataclasses.replace(CFG, epochs=3, learning_rate=5e-2)
    recs = rollout(agent, jobs_for_step(CFG, 0), 0)
    opt = make_optimizer(agent, one)
    st = update(agent, [recs[:4], recs[4:]], one, opt)
    assert (st['epochs'], st['clip_frac']) == (1, 0.0)                       # on-policy: the ratio is 1, nothing to clip
    assert {v['step'].item() for v in opt.state.values()} == {1.0}
    agent = tiny_agent(); opt = make_optimizer(agent, three)
    st = update(agent, [recs[:4], recs[4:]], three, opt)
    assert st['epochs'] == 3 and st['clip_frac'] > 0                          # the third pass sees a moved policy
    assert {v['step'].item() for v in opt.state.values()} == {3.0}
    with pytest.raises(ValueError, match='empty run'): OuterConfig(epochs=0)

def _lp(agent, p, c) -> list:
    "Log-probs of completion `c` after prompt `p` under the agent now (what sampling would have recorded)."
    ids = torch.tensor([p + c])
    with torch.no_grad(): l = agent.model(input_ids=ids).logits[0, :-1].float().log_softmax(-1)
    return l[len(p) - 1:].gather(-1, ids[0, len(p):, None])[:, 0].tolist()

def test_policy_probe_reads_what_the_update_teaches():
    "Reward the turn that writes learning rate 1.0e-4 over the other options: the probe's P(1.0e-4) must rise."
    from agentforge.agents import CHOICES, LMAgent
    from agentforge.models import build_tokenizer, tiny_model
    tok = build_tokenizer()
    agent = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, lora=dict(r=4, alpha=8))
    before = outer.policy_probe(agent, ['date_math', 'arithmetic'])
    assert before == outer.policy_probe(agent, ['date_math', 'arithmetic'])   # teacher forcing: no sampling noise
    assert all(abs(sum(p.values()) - 1) < 1e-3 for b in before.values() for p in b.values())
    assert set(before['date_math']) == set(CHOICES)
    turns = {o: outer._turn_ids(agent, 'date_math', {'learning_rate': o}) for o in CHOICES['learning_rate']}
    cfg = dataclasses.replace(CFG, learning_rate=1e-2, epochs=1, negative_weight=1.0)  # GRPO: the other options down too
    opt = make_optimizer(agent, cfg)
    for _ in range(3):
        recs = [Record('date_math', 0, [dict(prompt_ids=p, completion_ids=c, logprobs=_lp(agent, p, c))], dict(total=float(o == '1.0e-4')))
                for o, (p, c) in turns.items()]
        update(agent, [recs], cfg, opt)
    after = outer.policy_probe(agent, ['date_math', 'arithmetic'])
    assert after['date_math']['learning_rate']['1.0e-4'] > before['date_math']['learning_rate']['1.0e-4'] + 0.05

def test_policy_probe_reads_the_student_choice_in_a_brief_that_offers_it():
    "Offered students add a `student` knob, read in the brief the run shows (the offer line included)."
    from agentforge.agents import CHOICES, LMAgent
    from agentforge.models import build_tokenizer, tiny_model
    tok = build_tokenizer()
    agent = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, lora=dict(r=4, alpha=8))
    plain = outer.policy_probe(agent, ['date_math'])['date_math']
    offered = outer.policy_probe(agent, ['date_math'], students=('tiny-student-large',))['date_math']
    assert set(plain) == set(CHOICES) and set(offered) == set(CHOICES) | {'student'}
    assert set(offered['student']) == {'tiny-student', 'tiny-student-large'} and abs(sum(offered['student'].values()) - 1) < 1e-3
    assert offered['level'] != plain['level']   # another prompt: the offer line is in the brief the probe conditions on
    p, _ = outer._turn_ids(agent, 'date_math', {}, ('tiny-student-large',))
    assert '(or: tiny-student-large)' in tok.decode(p)

@pytest.fixture(scope='module')
def uninterrupted(tmp_path_factory):
    "A 4-step run without interruption, on one thread: its metrics rows and final adapter."
    n = torch.get_num_threads(); torch.set_num_threads(1)
    try:
        agent = tiny_agent(); rows = train(agent, CFG, tmp_path_factory.mktemp('straight'), rollout, progress=False)
    finally: torch.set_num_threads(n)
    return rows, _lora(agent)

CHILD = '''
import os, signal, sys, torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[2])
import test_outer as t
from agentforge import outer
real = outer.save_state
def save_or_die(run_dir, step, *a, **k):
    if step == 3: os.kill(os.getpid(), signal.SIGKILL)   # step 3's metrics row is written, its checkpoint is not
    return real(run_dir, step, *a, **k)
outer.save_state = save_or_die
outer.train(t.tiny_agent(), t.CFG, sys.argv[1], t.rollout, progress=False)
'''

def test_sigkill_then_resume_matches_uninterrupted(tmp_path, uninterrupted):
    rows, lora = uninterrupted
    assert [r['step'] for r in rows] == [0, 1, 2, 3] and sum(not r['skipped'] for r in rows) >= 3
    p = subprocess.run([sys.executable, '-c', CHILD, str(tmp_path), str(Path(__file__).parent)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert p.returncode == -9, p.stderr[-2000:]
    assert sorted(q.name for q in (tmp_path / 'checkpoints').glob('step-*')) == ['step-1', 'step-2']
    assert [r['step'] for r in read_metrics(tmp_path)] == [0, 1, 2, 3]   # a row for the step that will be redone
    agent = tiny_agent()
    again = train(agent, CFG, tmp_path, rollout, progress=False)
    assert [r['step'] for r in again] == [0, 1, 2, 3]   # step 3's stale row dropped, not duplicated
    assert _drop_seconds(again) == _drop_seconds(rows)
    assert [(r['reward_mean'], r['loss']) for r in again] == [(r['reward_mean'], r['loss']) for r in rows]
    end = _lora(agent)
    assert all(torch.equal(end[n], lora[n]) for n in lora)

def test_ctrl_c_then_same_call_resumes(tmp_path, uninterrupted, monkeypatch):
    rows, lora = uninterrupted
    real = outer.save_state
    def interrupt(run_dir, step, *a, **k):   # Ctrl-C after step 0's update, before any checkpoint exists
        if step == 0: raise KeyboardInterrupt
        return real(run_dir, step, *a, **k)
    monkeypatch.setattr(outer, 'save_state', interrupt)
    agent = tiny_agent()
    with pytest.raises(KeyboardInterrupt): train(agent, CFG, tmp_path, rollout, progress=False)
    monkeypatch.setattr(outer, 'save_state', real)
    again = train(agent, CFG, tmp_path, rollout, progress=False)   # the same call, the same agent object
    assert _drop_seconds(again) == _drop_seconds(rows)
    assert all(torch.equal(p, lora[n]) for n, p in _lora(agent).items())

def test_changed_config_refuses_to_resume(tmp_path):
    cfg = dataclasses.replace(CFG, steps=1, briefs_per_step=1, group_size=2)
    train(tiny_agent(), cfg, tmp_path, rollout, progress=False)
    with pytest.raises(ResumeMismatch, match='config'):
        train(tiny_agent(), dataclasses.replace(cfg, learning_rate=1e-3), tmp_path, rollout, progress=False)
    assert len(train(tiny_agent(), dataclasses.replace(cfg, steps=2), tmp_path, rollout, progress=False)) == 2   # steps may grow

def test_jobs_for_step():
    jobs = jobs_for_step(CFG, 5)
    assert jobs == jobs_for_step(dataclasses.replace(CFG, steps=99), 5) != jobs_for_step(CFG, 6)
    assert len(jobs) == 8 and len({s for _, s in jobs}) == 8
    assert len({b for b, _ in jobs[:4]}) == 1 and len({b for b, _ in jobs[4:]}) == 1 and jobs[0][0] != jobs[4][0]
    with pytest.raises(ValueError, match='unknown brief'): OuterConfig(families=('nope',))

def test_balanced_schedule_trains_every_family_equally_often_and_never_leaves_one_out_long():
    """The default schedule takes the families drawn least so far (retro 2026-12-05-a-family-left-out-broke): over 54
    steps of 2 briefs on 5 families each gets 21 or 22 groups and waits at most 5 steps; seed 0's independent draw
    gave 18–30 and a 13-step gap. Both are pure functions of (seed, step); 'iid' is the earlier draw, unchanged."""
    from collections import Counter
    from agentforge.outer import step_briefs
    five = OuterConfig(families=('multihop_lookup', 'arithmetic', 'unit_conversion', 'date_math', 'string_ops'))
    def stats(cfg):
        draws, last, gap = [step_briefs(cfg, s) for s in range(54)], {}, 0
        for s, d in enumerate(draws):
            assert len(set(d)) == len(d) == 2                               # no brief twice in a step
            for f in d: gap, last[f] = max(gap, s - last.get(f, -1)), s
        return sorted(Counter(f for d in draws for f in d).values()), gap
    for seed in (0, 1, 2):
        counts, gap = stats(dataclasses.replace(five, seed=seed))
        assert counts[0] >= 21 and counts[-1] <= 22 and gap <= 5
    assert stats(dataclasses.replace(five, schedule='iid')) == ([18, 19, 20, 21, 30], 13)
    assert step_briefs(dataclasses.replace(five, schedule='iid'), 30) == ['string_ops', 'multihop_lookup']
    assert [step_briefs(five, s) for s in (7, 33)] == [step_briefs(OuterConfig(**five.to_json()), s) for s in (7, 33)]
    many = dataclasses.replace(five, briefs_per_step=7)                     # more groups than families: repeats allowed
    assert sorted(Counter(step_briefs(many, 0)).values()) == [1, 1, 1, 2, 2]
    with pytest.raises(ValueError, match='schedule is one of'): OuterConfig(schedule='round-robin')


def test_episode_weighting_cancels_a_shared_template():
    """Lesson 11 (retro 2026-11-30-falling-curve-was-the-brief-schedule): a failing episode retries the same turn 3 times, a winning
    one writes it once (advantages -1 and +1). Per-episode weighting gives zero gradient on those shared tokens; a
    token-level mean pushes them down."""
    agent = tiny_agent()
    with torch.no_grad():
        prompt = agent.tok.encode('brief: x')
        comp = agent.tok.encode('rewards: [{use: exact_match}]') + [agent.tok.eos_token_id]
        lp = grpo.token_logprobs(agent.model, torch.tensor([prompt + comp]), torch.ones(1, len(prompt + comp), dtype=torch.long))
    turn = dict(prompt_ids=prompt, completion_ids=comp, logprobs=lp[0, len(prompt):].tolist())
    group = [[Record('x', 0, [turn] * 3, dict(total=0.0, validation=0.0, uplift=0.0, speed=0.0)),
              Record('x', 1, [turn], dict(total=1.0, validation=1.0, uplift=0.0, speed=0.0))]]
    norms = {}
    for agg in ('episode', 'token'):
        # GRPO: both pushes; no KL (its gradient is not what this test is about)
        cfg = OuterConfig(group_size=2, loss_agg=agg, max_grad_norm=1e9, negative_weight=1.0, beta=0.0)
        norms[agg] = outer.update(agent, group, cfg, make_optimizer(agent, cfg))['grad_norm']
        agent = tiny_agent()  # the same start for the other aggregation
    assert norms['episode'] < 1e-6 < 1e-3 < norms['token'], norms
