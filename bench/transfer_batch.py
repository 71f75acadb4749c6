"""The transfer stage, agent by agent (as before 2026-12-05, inlined here) against one batch for all four agents
(`run.transfer_stage` now), each on an empty inner-result cache so every spec trains: wall seconds and the pool's
slot use. The trained agent is a run's adapter (its `checkpoints/step-N/adapter`).

Run, one after the other on an idle machine, each with its own empty cache (the student and agent base linked in):
    AGENTFORGE_CACHE_DIR=/tmp/a/cache OLD=1 .venv/bin/python bench/transfer_batch.py RUN/checkpoints/step-53/adapter /tmp/a/run
    AGENTFORGE_CACHE_DIR=/tmp/b/cache       .venv/bin/python bench/transfer_batch.py RUN/checkpoints/step-53/adapter /tmp/b/run
"""
import json, os, sqlite3, sys, time
from pathlib import Path
import agentforge.run as run
from agentforge.cloning import load_tiny_agent
from agentforge.config import RunConfig, split_families

adapter, out = sys.argv[1], Path(sys.argv[2])
out.mkdir(parents=True)
cfg = RunConfig()
trained = load_tiny_agent(run.clone_for(cfg), adapter=adapter, progress=False, temperature=cfg.temperature,
                          name='tiny-agent')
t = time.monotonic()
if os.environ.get('OLD'):  # the code before: each agent's episodes played, trained and graded in turn
    from agentforge.agents import ScriptedAgent
    from agentforge.episode import run_episodes
    from agentforge.transfer import eval_jobs, evaluate
    train_fams, held = split_families(cfg.holdout)
    untrained = load_tiny_agent(run.clone_for(cfg), progress=False, temperature=cfg.temperature, name='untrained')
    agents = dict(trained=trained, untrained=untrained,
                  **{f'scripted-{p}': ScriptedAgent(p) for p in ('random', 'heuristic')})
    def run_fn(agent, jobs):
        return run_episodes(agent, jobs, out / 'transfer', run._env(cfg, out), tag=run.agent_name(agents, agent))
    evaluate(agents, eval_jobs(held + [f for f in cfg.eval_trained if f in train_fams], cfg.eval_per_family,
                               cfg.outer.seed), run_fn)
else: run.transfer_stage(cfg, out, trained, progress=False)
seconds = time.monotonic() - t
rows = sqlite3.connect(out / 'pool' / 'queue.db').execute('select started, finished from jobs').fetchall()
busy, span = sum(f - s for s, f in rows), max(f for _, f in rows) - min(s for s, _ in rows)
print(json.dumps(dict(batch='agent by agent' if os.environ.get('OLD') else 'one batch', seconds=round(seconds, 1),
                      jobs=len(rows), slot_use=round(busy / (cfg.slots * span), 3))))
