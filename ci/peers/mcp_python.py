"""Peer check: the official Python MCP client (mcp==2.3.0) lists
mcp-nextcloud's tools and calls one with the user's bearer.

Run through mcp.sh (which sets TAMEBI_MCP_URL, TAMEBI_MCP_TOKEN and
TAMEBI_NEXTCLOUD_TOKEN). Prints "mcp-python: N passed, N failed".
"""

import asyncio
import os
import sys

results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {name}")
    else:
        results["failed"] += 1
        print(f"FAIL {name}: {detail}")


async def main():
    try:
        import httpx2 as httpx
    except ImportError:
        import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url = os.environ["TAMEBI_MCP_URL"]
    headers = {
        "Authorization": f"Bearer {os.environ['TAMEBI_MCP_TOKEN']}",
        "x-tamebi-nextcloud-token": os.environ["TAMEBI_NEXTCLOUD_TOKEN"],
    }
    async with httpx.AsyncClient(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                listed = await session.list_tools()
                names = [tool.name for tool in listed.tools]
                check("lists the tools", "files_search" in names and "files_read" in names, names)
                result = await session.call_tool("files_search", {"name": "budget"})
                structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None) or {}
                paths = [file["path"] for file in structured.get("files", [])]
                check(
                    "calls files_search as the user",
                    not getattr(result, "is_error", getattr(result, "isError", False))
                    and "Projects/Apollo/budget.ods" in paths,
                    paths,
                )


try:
    asyncio.run(main())
except Exception as error:  # a client that cannot connect is a failed check
    check("connects with a bearer", False, repr(error))
print(f"mcp-python: {results['passed']} passed, {results['failed']} failed")
sys.exit(0 if results["failed"] == 0 and results["passed"] > 0 else 1)
