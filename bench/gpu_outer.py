"""Device check: outer LoRA-GRPO updates with `HFAgent` on the real Qwen3.6-35B-A3B architecture (random weights).

No weights can be downloaded on the device machines, so the agent is `Qwen3_5MoeForCausalLM` built from
transformers' `Qwen3_5MoeTextConfig()` defaults — the 35B-A3B text architecture: 40 layers (30 Gated-DeltaNet + 10
full attention), hidden 2048, 256 experts with 8 active, 16 query / 2 KV heads, a 248,320-token vocabulary — with
random bf16 weights (~70 GB). LoRA r 8, alpha 32 goes on attention and, through peft `target_parameters`, on the fused
expert tensors (`models.lora_config`). The tokenizer is our byte-level one (its ids are a subset of the vocabulary).

What runs is the real code path: `episode.play` with the agent against a real workspace and probe (a random-weight
model writes no valid tool call, so episodes end quickly, which is fine: this measures cost, not quality), then
`outer.update` on those turns. Rewards of a random model are all 0, and an all-equal group is skipped by design, so the
timing harness gives the records of each group distinct synthetic rewards (0, 1/G, ...) — labelled in the artifact —
to make every update a real optimizer step.

Writes one JSON artifact: generation tokens/s, per-update seconds, peak GPU memory, trainable parameter count, versions.

Run on a GPU machine:   python bench/gpu_outer.py --updates 2 --episodes 4 --out "$OUT/gpu_outer.json"
Rehearse on a CPU:      python bench/gpu_outer.py --cpu-rehearsal --out /tmp/gpu_outer.json
(the rehearsal runs the same code path on CPU with a 4-layer, hidden-64, 8-expert variant of the architecture)
"""
import argparse, json, platform, statistics, tempfile, time
from pathlib import Path


def build_agent(rehearsal:bool, device:str, max_new_tokens:int):
    "The 35B-A3B architecture (or its CPU miniature) with random weights, wrapped as an LMAgent with LoRA r 8 / alpha 32."
    import torch
    from transformers.models.qwen3_5_moe import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig
    from agentforge.agents import AGENT_LORA, LMAgent
    from agentforge.models import build_tokenizer
    tok = build_tokenizer()
    cfg = Qwen3_5MoeTextConfig(eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    if rehearsal:
        cfg = Qwen3_5MoeTextConfig(**{**cfg.to_dict(), **dict(
            num_hidden_layers=4, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            linear_num_key_heads=4, linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
            moe_intermediate_size=32, shared_expert_intermediate_size=32, num_experts=8, num_experts_per_tok=2,
            vocab_size=len(tok), layer_types=['linear_attention'] * 3 + ['full_attention'])})
    torch.manual_seed(0)
    dtype = torch.float32 if rehearsal else torch.bfloat16
    with torch.device(device): model = Qwen3_5MoeForCausalLM(cfg).to(dtype)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = tok.eos_token_id, tok.pad_token_id
    agent = LMAgent(model, tok, name='qwen3.6-35b-a3b-random', lora=AGENT_LORA, compact_tools=False, max_new_tokens=max_new_tokens)
    return agent, cfg


def main(a):
    import torch, transformers, peft
    from agentforge.episode import Budgets, play
    from agentforge.outer import OuterConfig, make_optimizer, update
    device = 'cpu' if a.cpu_rehearsal else 'cuda'
    if device == 'cuda' and not torch.cuda.is_available(): raise SystemExit('no CUDA device: use --cpu-rehearsal on a CPU')
    t0 = time.monotonic(); agent, cfg = build_agent(a.cpu_rehearsal, device, a.max_new_tokens); build_s = time.monotonic() - t0
    trainable = sum(p.numel() for p in agent.model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in agent.model.parameters())
    ocfg = OuterConfig(steps=a.updates, group_size=a.episodes, briefs_per_step=1, learning_rate=1e-4, micro_batch=1)
    opt, root = make_optimizer(agent, ocfg), Path(tempfile.mkdtemp(prefix='gpu-outer-'))
    if device == 'cuda': torch.cuda.reset_peak_memory_stats()
    gen_tokens = gen_s = 0.0; updates = []
    for u in range(a.updates):
        t = time.monotonic()
        recs = [play(agent, 'string_ops', 1000 * u + i, root / f'u{u}-e{i}', budgets=Budgets(max_turns=a.turns), saturation=False)
                for i in range(a.episodes)]
        gen_s += time.monotonic() - t; gen_tokens += sum(r.tokens for r in recs)
        for i, r in enumerate(recs): r.reward = dict(total=i / a.episodes, validation=0.0, uplift=0.0, speed=0.0)  # synthetic: see docstring
        st = update(agent, [recs], ocfg, opt)
        updates.append(dict(seconds=round(st['seconds_update'], 3), samples=st['samples'], tokens=st['tokens'],
                            loss=st['loss'], grad_norm=st['grad_norm'], skipped=st['skipped']))
    out = dict(architecture='Qwen3_5MoeForCausalLM (Qwen3.6-35B-A3B text config)', rehearsal=a.cpu_rehearsal,
               device=torch.cuda.get_device_name() if device == 'cuda' else f'cpu ({platform.machine()})',
               config=dict(layers=cfg.num_hidden_layers, hidden=cfg.hidden_size, experts=cfg.num_experts,
                           active=cfg.num_experts_per_tok, vocab=cfg.vocab_size),
               params_total=total, params_trainable=trainable, build_seconds=round(build_s, 1),
               episodes_per_update=a.episodes, generation_tokens=int(gen_tokens),
               generation_tokens_per_second=round(gen_tokens / gen_s, 1) if gen_s else None,
               update_seconds=dict(median=statistics.median(u['seconds'] for u in updates), all=updates),
               peak_memory_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == 'cuda' else None,
               rewards='synthetic distinct rewards per group (timing harness), not episode rewards',
               versions=dict(torch=torch.__version__, transformers=transformers.__version__, peft=peft.__version__))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--updates', type=int, default=2, help='outer updates to time')
    p.add_argument('--episodes', type=int, default=4, help='episodes per update (one group)')
    p.add_argument('--turns', type=int, default=2, help='agent turns per episode at most')
    p.add_argument('--max-new-tokens', type=int, default=256, help='tokens per agent turn at most')
    p.add_argument('--cpu-rehearsal', action='store_true', help='run the same path on CPU with a miniature architecture')
    p.add_argument('--out', default='gpu_outer.json', help='where to write the JSON artifact')
    main(p.parse_args())
