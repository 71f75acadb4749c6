"Tokenizer round trip, Qwen3 chat template with tool calls, presets and their errors, expert LoRA on the MoE stand-in."
import pytest, torch
from hypothesis import given, settings, strategies as st
from peft import get_peft_model
from trl.chat_template_utils import parse_response, qwen3_chat_template
from agentforge.models import (WeightsUnavailable, build_tokenizer, get_preset, load_pretrained, lora_config,
                               random_init_config, tiny_model)

TOK = build_tokenizer()

@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_round_trips(text):
    assert TOK.decode(TOK(text, add_special_tokens=False)['input_ids']) == text

def test_control_tokens_are_single_ids():
    for t in ('<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>', '<tool_call>', '</tool_call>'):
        assert len(TOK(t, add_special_tokens=False)['input_ids']) == 1, t
    assert TOK.eos_token == '<|im_end|>' and TOK.pad_token == '<|endoftext|>'

def test_template_is_trls_qwen3_and_tool_call_round_trips():
    assert TOK.chat_template == qwen3_chat_template
    tools = [dict(type='function', function=dict(name='write_file', description='Write a file.', parameters=dict(
        type='object', properties=dict(path=dict(type='string'), content=dict(type='string')), required=['path', 'content'])))]
    call = [dict(type='function', function=dict(name='write_file', arguments=dict(path='task.yaml', content='spec_version: 1\n')))]
    msgs = [dict(role='user', content='Write the spec.')]
    full = TOK.apply_chat_template(msgs + [dict(role='assistant', content='', tool_calls=call)], tools=tools, tokenize=False)
    assert '<tool_call>\n{"name": "write_file", "arguments": {"path": "task.yaml"' in full
    prefix = TOK.apply_chat_template(msgs, tools=tools, add_generation_prompt=True, tokenize=False)
    completion = full[len(prefix):].split('<|im_end|>')[0] + '<|im_end|>'
    parsed = parse_response(TOK, TOK(completion, add_special_tokens=False)['input_ids'],
                            prefix=TOK(prefix, add_special_tokens=False)['input_ids'], tools=tools)
    assert parsed['tool_calls'] == call

def test_tool_response_is_rendered_as_user_turn():
    msgs = [dict(role='user', content='hi'), dict(role='assistant', content='', tool_calls=[
        dict(type='function', function=dict(name='list_files', arguments={}))]), dict(role='tool', content='task.yaml')]
    text = TOK.apply_chat_template(msgs, tokenize=False)
    assert '<|im_start|>user\n<tool_response>\ntask.yaml\n</tool_response><|im_end|>' in text

def test_unknown_preset_and_missing_weights(monkeypatch, tmp_path):
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    with pytest.raises(ValueError, match='accepted'): get_preset('gpt-5')
    for name in ('qwen3-0.6b', 'qwen3-1.7b', 'qwen3.6-35b-a3b'):
        with pytest.raises(WeightsUnavailable, match='not on this machine'): load_pretrained(name)
    with pytest.raises(WeightsUnavailable, match='no config.json'): load_pretrained(str(tmp_path))

def test_checkpoint_folder_round_trip(tmp_path):
    m = tiny_model('student', seed=0, tok=TOK); m.save_pretrained(tmp_path); TOK.save_pretrained(tmp_path)
    m2, t2 = load_pretrained(str(tmp_path))
    ids = TOK('What is 2 + 3?', return_tensors='pt')['input_ids']
    assert torch.allclose(m(ids).logits, m2(ids).logits)
    assert t2.chat_template == qwen3_chat_template

def test_real_architectures_recorded():
    cfg = random_init_config('qwen3-1.7b')
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size) == (2048, 28, 151936)
    with pytest.raises(ValueError, match='no recorded architecture'): random_init_config('tiny-student')

def test_expert_lora_moves_adapter_only():
    base = tiny_model('moe', seed=0, tok=TOK)
    cfg = lora_config(base)
    assert set(cfg.target_parameters) == {'mlp.experts.gate_up_proj', 'mlp.experts.down_proj'}
    model = get_peft_model(base, cfg)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert any('experts' in n for n in trainable) and any('q_proj' in n for n in trainable)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = TOK('Convert 3 km to m.', return_tensors='pt')['input_ids']
    for _ in range(2):
        model(input_ids=ids, labels=ids).loss.backward(); opt.step(); opt.zero_grad()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed == trainable

def test_dense_model_lora_targets_attention_only():
    cfg = lora_config(tiny_model('student', tok=TOK))
    assert not cfg.target_parameters and set(cfg.target_modules) == {'q_proj', 'k_proj', 'v_proj', 'o_proj'}
