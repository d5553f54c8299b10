"""A scripted LangChain chat model (no LLM) for the LangChain and mcp-use
agents: it asks for each step's tool calls in turn, then answers "done"."""

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage


class ScriptedChatModel(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def scripted_chat_model(*steps):
    messages = [
        AIMessage(content="", tool_calls=[
            {"name": name, "args": args, "id": f"call_{turn}_{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ])
        for turn, calls in enumerate(steps)
    ]
    return ScriptedChatModel(messages=iter(messages + [AIMessage(content="done")]))


def tool_messages(messages):
    """(tool, text) for each ToolMessage, in order."""
    out = []
    for message in messages:
        if isinstance(message, ToolMessage):
            content = message.content
            if isinstance(content, list):
                content = "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in content)
            out.append([message.name, content])
    return out
