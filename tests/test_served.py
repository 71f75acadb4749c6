"""`agentforge.served`: OpenAIAgent against a local fake server on loopback.

The fake server is `ChatServer`: it stands in for vLLM / Ollama (which can't run here) and speaks the same
OpenAI chat-completions wire format (JSON-text arguments, tool-call ids, `usage`, OpenAI error bodies), so every test
exercises the real HTTP client and the real request/response conversion. Retries use a tiny backoff to stay fast.
"""
import json, socket, urllib.error, urllib.request
import pytest
from agentforge.agents import ToolCall, Turn
from agentforge.served import AgentUnavailable, ChatServer, OpenAIAgent, from_wire, parse_reply, to_wire
from agentforge.workspace import TOOL_SCHEMAS

USER = [dict(role='user', content='Write a task.')]
TRICKY = 'line one\nsaid "hi" \\ back\tslash — π ünïcødé 🙂 </tool_call> {"x": 1}\n'


def agent(url, **kw): return OpenAIAgent(url, 'fake-model', backoff=0.01, timeout=5, **kw)

def fixed(turn):
    "A responder that always returns `turn` and records each (messages, tools, seed) it got."
    def respond(messages, tools, seed):
        respond.calls.append((messages, tools, seed)); return turn
    respond.calls = []
    return respond

def flaky(fails):
    "A responder that raises (so the server answers 500) on its first `fails` calls, then calls list_files."
    def respond(messages, tools, seed):
        respond.n += 1
        if respond.n <= fails: raise RuntimeError('model crashed')
        return Turn('', [ToolCall('list_files', {})], 2)
    respond.n = 0
    return respond

def raw(url, body=None, method='POST', headers=None):
    "Send a raw request; return (status, JSON body)."
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data, {'Content-Type': 'application/json', **(headers or {})}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read())

def free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


def test_tool_call_round_trip():
    call = ToolCall('write_file', {'path': 'data/train.jsonl', 'content': TRICKY})
    with ChatServer(fixed(Turn('Writing.', [call], 17))) as srv:
        turn = agent(srv.url).act(USER, TOOL_SCHEMAS, seed=0)
        status, wire = raw(srv.url + '/chat/completions', dict(model='m', messages=USER))
    assert (turn.text, turn.tool_calls, turn.tokens, turn.error) == ('Writing.', [call], 17, None)
    msg = wire['choices'][0]
    assert status == 200 and wire['object'] == 'chat.completion' and msg['finish_reason'] == 'tool_calls'
    assert isinstance(msg['message']['tool_calls'][0]['function']['arguments'], str)   # JSON text on the wire
    assert json.loads(msg['message']['tool_calls'][0]['function']['arguments'])['content'] == TRICKY
    assert wire['usage']['completion_tokens'] == 17 and wire['usage']['prompt_tokens'] > 0


def test_multi_turn_messages_converted():
    transcript = USER + [
        dict(role='assistant', content='Two calls.', tool_calls=[
            dict(type='function', function=dict(name='write_file', arguments={'path': 'notes.md', 'content': TRICKY})),
            dict(type='function', function=dict(name='list_files', arguments={}))]),
        dict(role='tool', name='write_file', content='{"ok": true}'),
        dict(role='tool', name='list_files', content='{"ok": true, "files": []}'),
        dict(role='assistant', content='', tool_calls=[dict(id='mine', type='function', function=dict(name='submit', arguments={}))]),
        dict(role='tool', tool_call_id='mine', name='submit', content='{"ok": false}')]
    respond = fixed(Turn('done', [], 1))
    with ChatServer(respond) as srv:
        turn = agent(srv.url).act(transcript, TOOL_SCHEMAS, seed=3)
        sent = srv.requests[0]['body']
    assert turn.tool_calls == [] and sent['tools'] == TOOL_SCHEMAS and sent['tool_choice'] == 'auto'
    m = sent['messages']
    assert [c['id'] for c in m[1]['tool_calls']] == ['call_1_0', 'call_1_1'] and m[4]['tool_calls'][0]['id'] == 'mine'
    assert [x.get('tool_call_id') for x in m] == [None, None, 'call_1_0', 'call_1_1', None, 'mine']
    assert all(isinstance(c['function']['arguments'], str) for x in m if 'tool_calls' in x for c in x['tool_calls'])
    assert json.loads(m[1]['tool_calls'][0]['function']['arguments']) == {'path': 'notes.md', 'content': TRICKY}
    assert all('name' not in x for x in m if x['role'] == 'tool')      # strict servers reject unknown fields
    back = from_wire(m)                                                # and back: dict arguments, names restored
    assert back[1]['tool_calls'][0]['function']['arguments']['content'] == TRICKY
    assert [x.get('name') for x in back if x['role'] == 'tool'] == ['write_file', 'list_files', 'submit']
    assert to_wire(transcript) == m                                    # deterministic


def test_invalid_arguments_dropped_and_reported():
    with ChatServer(fixed(Turn('', [ToolCall('write_file', {'path': 'a'}), ToolCall('submit', {})], 5))) as srv:
        good = srv.completion
        def corrupt(turn, body):                                       # the model wrote broken JSON for call 0
            reply = good(turn, body)
            reply['choices'][0]['message']['tool_calls'][0]['function']['arguments'] = '{"path": "a", "content": "unterminated'
            return reply
        srv.completion = corrupt
        turn = agent(srv.url).act(USER, TOOL_SCHEMAS, seed=0)
    assert turn.tool_calls == [ToolCall('submit', {})] and turn.tokens == 5
    assert turn.error.startswith('tool call 1 (write_file) has invalid arguments: Unterminated string')
    arr = parse_reply(dict(choices=[dict(message=dict(tool_calls=[dict(function=dict(name='submit', arguments='[1]'))]))]))
    assert arr.tool_calls == [] and 'JSON object' in arr.error


def test_usage_absent_estimates_tokens():
    turn = parse_reply(dict(choices=[dict(message=dict(content='x' * 40, tool_calls=[
        dict(function=dict(name='read_file', arguments='{"path": "task.yaml"}'))]))]))
    assert turn.tokens == (40 + len('{"path": "task.yaml"}')) // 4
    assert turn.tool_calls == [ToolCall('read_file', {'path': 'task.yaml'})]


def test_500_twice_then_200_retried():
    with ChatServer(flaky(2)) as srv:
        turn = agent(srv.url).act(USER, TOOL_SCHEMAS, seed=0)
        assert len(srv.requests) == 3
    assert turn.tool_calls == [ToolCall('list_files', {})]


def test_always_500_raises_with_url():
    with ChatServer(flaky(10**6)) as srv:
        with pytest.raises(AgentUnavailable) as e: agent(srv.url).act(USER, TOOL_SCHEMAS, seed=0)
        assert len(srv.requests) == 3 and f'{srv.url}/chat/completions' in str(e.value)
    assert 'HTTP 500' in str(e.value) and 'model crashed' in str(e.value) and isinstance(e.value, RuntimeError)


def test_connection_refused_says_what_to_do():
    url = f'http://127.0.0.1:{free_port()}/v1'
    with pytest.raises(AgentUnavailable) as e: agent(url).act(USER, TOOL_SCHEMAS, seed=0)
    msg = str(e.value)
    assert url in msg and 'cannot reach' in msg and 'after 3 tries' in msg and 'vllm serve' in msg and '--agent-url' in msg


def test_api_key_sent_as_bearer_and_never_leaked(monkeypatch):
    key = 'sk-test-SECRET-0123456789'
    with ChatServer(fixed(Turn('ok', [], 1)), api_key=key) as srv:
        assert agent(srv.url, api_key=key).act(USER, [], seed=0).text == 'ok'
        assert srv.requests[0]['headers']['Authorization'] == f'Bearer {key}'
        monkeypatch.setenv('OPENAI_API_KEY', key)                      # the default comes from the environment
        assert agent(srv.url).act(USER, [], seed=0).text == 'ok'
        wrong = 'sk-wrong-9876543210'
        with pytest.raises(AgentUnavailable) as e: agent(srv.url, api_key=wrong).act(USER, [], seed=0)
        assert len(srv.requests) == 2                                  # a 401 is not retried (and not recorded)
    assert 'HTTP 401' in str(e.value) and 'API key' in str(e.value)
    a = agent(f'http://127.0.0.1:{free_port()}/v1', api_key=key)
    with pytest.raises(AgentUnavailable) as e2: a.act(USER, [], seed=0)
    for text in (str(e.value), repr(e.value), str(e2.value), repr(a)): assert key not in text and wrong not in text


def test_seed_temperature_max_tokens_forwarded():
    respond = fixed(Turn('ok', [], 1))
    with ChatServer(respond) as srv:
        agent(srv.url, temperature=0.3, max_tokens=77).act(USER, [], seed=1234)
        body = srv.requests[0]['body']
    assert (body['model'], body['temperature'], body['max_tokens'], body['seed']) == ('fake-model', 0.3, 77, 1234)
    assert 'tools' not in body and 'tool_choice' not in body           # tool_choice without tools is a 400 on OpenAI
    assert respond.calls[0][2] == 1234


def test_server_rejects_bad_requests():
    with ChatServer(fixed(Turn('ok', [], 1)), model='served-name') as srv:
        chat = srv.url + '/chat/completions'
        cases = [raw(chat, b'{not json'), raw(chat, dict(model='m')), raw(chat, dict(messages=[dict(content='no role')])),
                 raw(chat, dict(messages=USER, seed='7')), raw(chat, dict(messages=USER, stream=True)), raw(chat, [1, 2]),
                 raw(chat, dict(messages=USER + [dict(role='assistant', content='', tool_calls=[      # history with broken arguments
                     dict(id='a', type='function', function=dict(name='submit', arguments='{bad'))])]))]
        missing = raw(srv.url + '/completions', dict(messages=USER))
        models = raw(srv.url + '/models', method='GET')
        assert srv.requests == []
    for status, body in cases: assert status == 400 and body['error']['type'] == 'invalid_request_error' and body['error']['message']
    assert missing[0] == 404 and 'error' in missing[1]
    assert models == (200, dict(object='list', data=[dict(id='served-name', object='model', created=0, owned_by='agentforge')]))


def test_from_agent_serves_our_agent():
    class Agent:
        name = 'ours'
        def act(self, messages, tools, seed):
            self.got.append((messages, tools, seed))
            return Turn('<think>hm</think>Look.\n<tool_call>{"name": "list_files", "arguments": {}}</tool_call>', [ToolCall('list_files', {})], 9,
                        prompt_ids=[1, 2, 3])
    ours = Agent(); ours.got = []
    transcript = USER + [dict(role='assistant', content='', tool_calls=[dict(type='function', function=dict(
        name='write_file', arguments={'path': 'notes.md', 'content': TRICKY}))]), dict(role='tool', content='{"ok": true}')]
    with ChatServer.from_agent(ours) as srv:
        assert srv.url.startswith('http://127.0.0.1:')                 # loopback by default
        turn = agent(srv.url).act(transcript, TOOL_SCHEMAS, seed=5)
        _, wire = raw(srv.url + '/chat/completions', dict(messages=USER))
        models = raw(srv.url + '/models', method='GET')[1]
    msgs, tools, seed = ours.got[0]
    assert msgs[1]['tool_calls'][0]['function']['arguments'] == {'path': 'notes.md', 'content': TRICKY}
    assert msgs[2]['name'] == 'write_file' and tools == TOOL_SCHEMAS and seed == 5
    assert (turn.text, turn.tool_calls, turn.tokens) == ('Look.', [ToolCall('list_files', {})], 9)   # markup stripped
    assert wire['choices'][0]['message']['tool_calls'][0]['id'] == 'call_2_0'
    assert wire['usage']['prompt_tokens'] == 3 and models['data'][0]['id'] == 'ours'
    assert isinstance(ours.got[1][2], int)                             # no seed sent: the server picks one
