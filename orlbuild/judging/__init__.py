"""LLM judges: prompts, the parse rule, the chat-completions client and its answer cache.

docs/llm-judges.md, "LLM judges". No store, services, pipeline or CLI: the service
``orlbuild/services/judging.py`` reads the plan and writes the answered file.
"""
