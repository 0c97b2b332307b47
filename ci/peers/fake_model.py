"""The official OpenAI Python client (openai 3.57.0) against the fake model.

Run through fake_model.sh, which starts `tamebi fake-model` with a script
and an API key and sets FAKE_MODEL_URL, FAKE_MODEL_KEY and
FAKE_MODEL_ADMIN_TOKEN (the token its /__fake/ routes require). Checks what the
orchestrator relies on: a streamed text answer; streamed tool calls with
usage; the stricter `chat.completions.stream()` helper, which parses the
assembled arguments of a strict tool; a non-streamed tool call and the full
tool round trip; and the faults surfacing as the client's own exceptions.
Prints one line per check and a last line `openai: N passed, N failed`;
exits 1 on any failure.
"""

import json
import os
import urllib.request

import openai
import pydantic
from peer_checks import check, expect, finish

URL = os.environ["FAKE_MODEL_URL"]
KEY = os.environ["FAKE_MODEL_KEY"]
ADMIN_TOKEN = os.environ["FAKE_MODEL_ADMIN_TOKEN"]
MODEL = "fake-model"
SYSTEM = {"role": "system", "content": "You are Tamebi, an assistant inside Nextcloud."}
GREP_TOOL = {
    "type": "function",
    "function": {
        "name": "files_grep",
        "description": "Find passages inside the user's documents.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
EXPECTED_QUERIES = ["budget prévisionnel apollo", "kickoff"]

client = openai.OpenAI(base_url=f"{URL}/v1", api_key=KEY, max_retries=0, timeout=20)
def ask(question):
    return [SYSTEM, {"role": "user", "content": question}]


def recorded():
    request = urllib.request.Request(
        f"{URL}/__fake/requests", headers={"x-tamebi-fake-admin": ADMIN_TOKEN}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["requests"]


def model_list():
    ids = [model.id for model in client.models.list()]
    expect(MODEL in ids, f"models: {ids}")


def streamed_text():
    stream = client.chat.completions.create(model=MODEL, messages=ask("Hello, what can you do?"), stream=True)
    chunks = list(stream)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    expect(text.startswith("Le budget prévisionnel d'Apollo"), f"text: {text!r}")
    expect(len(chunks) > 5, f"only {len(chunks)} chunks")
    expect(chunks[0].choices[0].delta.role == "assistant", "the first delta names the role")
    expect(chunks[-1].choices[0].finish_reason == "stop", f"last chunk: {chunks[-1]}")
    expect(all(chunk.usage is None for chunk in chunks), "no usage without include_usage")


def streamed_tool_calls_with_usage():
    stream = client.chat.completions.create(
        model=MODEL,
        messages=ask("What is the Apollo budget?"),
        tools=[GREP_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    )
    calls = {}
    usage = None
    finish_reason = None
    for chunk in stream:
        if chunk.usage is not None:
            expect(chunk.choices == [], "the usage chunk has no choices")
            usage = chunk.usage
        for choice in chunk.choices:
            finish_reason = choice.finish_reason or finish_reason
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                if call.id:
                    entry["id"] = call.id
                if call.function and call.function.name:
                    entry["name"] = call.function.name
                if call.function and call.function.arguments:
                    entry["arguments"] += call.function.arguments
    expect(finish_reason == "tool_calls", f"finish_reason {finish_reason!r}")
    expect(sorted(calls) == [0, 1], f"call indexes {sorted(calls)}")
    for index, query in enumerate(EXPECTED_QUERIES):
        entry = calls[index]
        expect(entry["id"] and entry["name"] == "files_grep", f"call {index}: {entry}")
        expect(json.loads(entry["arguments"]) == {"query": query}, f"call {index}: {entry['arguments']!r}")
    expect(usage is not None, "a usage chunk with include_usage")
    expect(usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, f"usage {usage}")


class FilesGrep(pydantic.BaseModel):
    query: str


def stream_helper_on_tool_calls():
    tool = openai.pydantic_function_tool(FilesGrep, name="files_grep", description="Search passages.")
    done_events = []
    with client.chat.completions.stream(model=MODEL, messages=ask("Budget of Apollo?"), tools=[tool]) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.done":
                done_events.append(event)
        completion = stream.get_final_completion()
    expect(len(done_events) == 2, f"{len(done_events)} arguments.done events")
    calls = completion.choices[0].message.tool_calls
    expect(completion.choices[0].finish_reason == "tool_calls", completion.choices[0].finish_reason)
    parsed = [call.function.parsed_arguments for call in calls]
    expect(all(isinstance(arguments, FilesGrep) for arguments in parsed), f"parsed: {parsed}")
    expect([arguments.query for arguments in parsed] == EXPECTED_QUERIES, f"parsed: {parsed}")
    # What the client sent is what the model was shown: the strict schema.
    tools = recorded()[-1]["body"]["tools"]
    expect(tools[0]["function"]["strict"] is True, f"tools sent: {tools}")


def non_streamed_tool_call_and_round_trip():
    messages = ask("Find the Apollo budget")
    completion = client.chat.completions.create(model=MODEL, messages=messages, tools=[GREP_TOOL])
    message = completion.choices[0].message
    expect(completion.object == "chat.completion", completion.object)
    expect(completion.choices[0].finish_reason == "tool_calls", completion.choices[0].finish_reason)
    expect(len(message.tool_calls) == 2, f"tool calls: {message.tool_calls}")
    expect(json.loads(message.tool_calls[0].function.arguments) == {"query": EXPECTED_QUERIES[0]}, "arguments")
    expect(completion.usage is not None and completion.usage.total_tokens > 0, f"usage {completion.usage}")
    # Send the calls back with their results, as the agent loop does.
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "- Projects/Apollo/CR-reunion-mars.docx — §3. Budget prévisionnel (fileid 1, offset 0, 9 bytes)\n  120 k€"})
    answer = client.chat.completions.create(model=MODEL, messages=messages, tools=[GREP_TOOL])
    expect(answer.choices[0].message.content.startswith("Le budget"), answer.choices[0].message.content)
    shown = recorded()[-1]["body"]["messages"]
    expect([m["role"] for m in shown] == ["system", "user", "assistant", "tool", "tool"], f"roles: {shown}")


def rate_limit_is_rate_limit_error():
    try:
        client.chat.completions.create(model=MODEL, messages=ask("rate limit me"), stream=True)
    except openai.RateLimitError as error:
        expect(error.status_code == 429, error.status_code)
        expect(error.response.headers.get("retry-after") == "1", dict(error.response.headers))
        expect(error.code == "rate_limit_exceeded", error.code)
    else:
        raise AssertionError("no RateLimitError")


def wrong_key_is_authentication_error():
    other = openai.OpenAI(base_url=f"{URL}/v1", api_key="sk-wrong", max_retries=0)
    try:
        other.chat.completions.create(model=MODEL, messages=ask("Hello"))
    except openai.AuthenticationError as error:
        expect(error.status_code == 401, error.status_code)
    else:
        raise AssertionError("no AuthenticationError")


def llama_refusal_is_internal_server_error():
    try:
        client.chat.completions.create(model=MODEL, messages=ask("llama mode"), tools=[GREP_TOOL], stream=True)
    except openai.InternalServerError as error:
        expect("Automatic streaming tool choice is not supported" in str(error), str(error))
    else:
        raise AssertionError("no InternalServerError")
    # The fallback: the same request without streaming is answered.
    completion = client.chat.completions.create(model=MODEL, messages=ask("llama mode"), tools=[GREP_TOOL])
    expect(completion.choices[0].message.content.startswith("Streaming with tools is refused"), "fallback")


def cut_stream_raises():
    stream = client.chat.completions.create(model=MODEL, messages=ask("cut me off"), stream=True)
    text = ""
    try:
        for chunk in stream:
            text += "".join(choice.delta.content or "" for choice in chunk.choices)
    except Exception:  # httpx reports the incomplete body; the client passes it on
        expect(text, "some text arrived before the cut")
    else:
        raise AssertionError(f"the cut stream ended normally after {text!r}")


check("model list", model_list)
check("streamed text", streamed_text)
check("streamed tool calls with include_usage", streamed_tool_calls_with_usage)
check("chat.completions.stream() helper on a tool-call turn", stream_helper_on_tool_calls)
check("non-streamed tool call and tool round trip", non_streamed_tool_call_and_round_trip)
check("429 surfaces as RateLimitError", rate_limit_is_rate_limit_error)
check("wrong key surfaces as AuthenticationError", wrong_key_is_authentication_error)
check("llama.cpp refusal surfaces as InternalServerError", llama_refusal_is_internal_server_error)
check("a cut stream raises", cut_stream_raises)

finish("openai")
