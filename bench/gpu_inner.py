"""Device check: a few inner GRPO steps on the real Qwen3-0.6B architecture (random weights) on a GPU.

No weights can be downloaded on the device machines either, so the model is `models.random_init_config('qwen3-0.6b')`
(28 layers, hidden 1024, the real 151,936-token vocabulary, tied embeddings) with random bf16 weights, saved to a
folder with our byte-level tokenizer so that vLLM (when installed) can load it like a checkpoint. The spec is the
arithmetic example for `qwen3-0.6b` (LoRA r 16, alpha 32), trained by `inner.train_spec` with `device='cuda'`:
bf16, vLLM colocate when importable, otherwise transformers generation.

Writes one JSON artifact: per-step time, completion tokens per second, peak GPU memory, generation backend, versions.

Run on a GPU machine:   python bench/gpu_inner.py --steps 6 --out "$OUT/gpu_inner.json"
Rehearse on a CPU:      python bench/gpu_inner.py --cpu-rehearsal --steps 2 --out /tmp/gpu_inner.json
(the rehearsal runs the same code path on CPU with a 2-layer, hidden-64 variant of the architecture)
"""
import argparse, json, platform, statistics, tempfile, time
from pathlib import Path
import yaml

def build_random_student(preset:str, folder:Path, rehearsal:bool) -> Path:
    "Save the preset's architecture with random weights and our tokenizer to `folder`."
    import torch
    from transformers import AutoModelForCausalLM
    from transformers import Qwen3Config
    from agentforge.models import build_tokenizer, random_init_config
    cfg = random_init_config(preset)
    if rehearsal: cfg = Qwen3Config(**{**cfg.to_dict(), 'layer_types': None, **dict(num_hidden_layers=2, hidden_size=64,
                                       intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=4096)})
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32 if rehearsal else torch.bfloat16)
    model.save_pretrained(folder); build_tokenizer().save_pretrained(folder)
    return folder

def main(a):
    import torch, trl, transformers
    from agentforge.inner import has_vllm, train_spec
    from agentforge.schema import load_spec
    from agentforge.rows import example_spec, load_rows
    device = 'cpu' if a.cpu_rehearsal else 'cuda'
    if device == 'cuda' and not torch.cuda.is_available(): raise SystemExit('no CUDA device: use --cpu-rehearsal on a CPU')
    root = Path(tempfile.mkdtemp(prefix='gpu-inner-'))
    t0 = time.monotonic(); student = build_random_student(a.preset, root / 'student', a.cpu_rehearsal); build_s = time.monotonic() - t0
    d = example_spec('arithmetic', root / 'spec', n=256, student=a.preset, hidden_root=root / 'platform')
    doc = yaml.safe_load((d / 'task.yaml').read_text())
    doc['grpo'].update(max_steps=a.steps, per_device_train_batch_size=a.batch, num_generations=8, max_completion_length=a.max_len)
    (d / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(d)
    if device == 'cuda': torch.cuda.reset_peak_memory_stats()
    t = train_spec(spec, load_rows(spec, hidden_root=root / 'platform'), root / 'work', student=str(student),
                   device=device, save_steps=0)
    steps = [h['step_time'] for h in t.history if 'step_time' in h]
    toks = sum(h.get('completions/mean_length', 0) * a.batch for h in t.history)
    out = dict(preset=a.preset, rehearsal=a.cpu_rehearsal, device=torch.cuda.get_device_name() if device == 'cuda' else f'cpu ({platform.machine()})',
               steps=t.steps, train_seconds=round(t.seconds, 3), student_build_seconds=round(build_s, 2),
               step_seconds=dict(median=round(statistics.median(steps), 4), all=[round(s, 4) for s in steps]) if steps else None,
               completion_tokens_per_second=round(toks / t.seconds, 1), batch=a.batch, max_completion_length=a.max_len,
               peak_memory_gib=round(torch.cuda.max_memory_allocated() / 2**30, 3) if device == 'cuda' else None,
               generation='vllm-colocate' if device == 'cuda' and has_vllm() else 'transformers',
               lora=spec.grpo.get('lora'), versions=dict(torch=torch.__version__, trl=trl.__version__, transformers=transformers.__version__),
               reward_last=t.history[-1].get('reward') if t.history else None)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--preset', default='qwen3-0.6b', help='a student preset with a recorded architecture')
    ap.add_argument('--steps', type=int, default=6, help='GRPO steps')
    ap.add_argument('--batch', type=int, default=64, help='per-device batch (completions), divisible by 8 generations')
    ap.add_argument('--max-len', type=int, default=64, help='max completion tokens')
    ap.add_argument('--out', default='gpu_inner.json', help='where the JSON artifact goes')
    ap.add_argument('--cpu-rehearsal', action='store_true', help='run the same path on CPU with a tiny variant')
    main(ap.parse_args())
