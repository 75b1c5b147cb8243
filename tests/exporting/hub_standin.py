"""A LOCAL STAND-IN for the Hugging Face Hub — not the Hub, and not a mock of huggingface_hub.

A small ``http.server`` in a thread answering just the endpoints huggingface_hub calls when the
trace exporter uploads (read from huggingface_hub's own source: ``HfApi.whoami``,
``create_repo``, ``repo_info`` for datasets, ``preupload_lfs_files`` → ``_fetch_upload_modes``,
``create_commit`` → ``_send_commit``):

- ``GET  /api/whoami-v2``                                   the token's user
- ``POST /api/repos/create``                                 create a repo (409 when it exists)
- ``GET  /api/datasets/<ns>/<name>[/revision/<rev>]``        repo info (``private``)
- ``POST /api/datasets/<ns>/<name>/preupload/<rev>``         every file "regular" (inline)
- ``POST /api/datasets/<ns>/<name>/commit/<rev>``            NDJSON commit, base64 file contents

The real huggingface_hub client talks to it over HTTP through ``HF_ENDPOINT``; the stand-in keeps
what it was sent (repos with their visibility and files, the requests) for the tests to check.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class StandInRepo:
    """A repository as the stand-in Hub holds it."""

    repo_id: str
    repo_type: str
    private: bool
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)


@dataclass
class StandInHubState:
    """Everything the stand-in Hub was told."""

    token: str
    user: str
    repos: dict[str, StandInRepo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    create_payloads: list[dict[str, Any]] = field(default_factory=list)


def _visibility_is_private(payload: dict[str, Any]) -> bool:
    # huggingface_hub ≥ 1.x sends "visibility"; older versions send "private". Unset = public.
    if "visibility" in payload:
        return bool(payload["visibility"] == "private")
    return bool(payload.get("private", False))


class _Handler(BaseHTTPRequestHandler):
    server: _StandInServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorised(self) -> bool:
        expected = f"Bearer {self.server.state.token}"
        if self.headers.get("Authorization") == expected:
            return True
        self._reply(401, {"error": "Invalid credentials in Authorization header"})
        return False

    def _repo(self, parts: list[str]) -> StandInRepo | None:
        repo = self.server.state.repos.get(f"{parts[2]}/{parts[3]}")
        if repo is None or repo.repo_type != "dataset":
            self._reply(404, {"error": "Repository not found"})
            return None
        return repo

    def do_GET(self) -> None:
        state = self.server.state
        path = self.path.split("?")[0]
        state.requests.append(("GET", path))
        if not self._authorised():
            return
        parts = path.strip("/").split("/")
        if path == "/api/whoami-v2":
            self._reply(200, {"type": "user", "name": state.user, "auth": {"type": "access_token"}})
        elif len(parts) >= 4 and parts[:2] == ["api", "datasets"]:
            repo = self._repo(parts)
            if repo is not None:
                self._reply(200, {"id": repo.repo_id, "private": repo.private, "sha": "0" * 40})
        else:
            self._reply(404, {"error": f"stand-in Hub does not serve GET {path}"})

    def do_POST(self) -> None:
        state = self.server.state
        path = self.path.split("?")[0]
        state.requests.append(("POST", path))
        body = self._body()
        if not self._authorised():
            return
        parts = path.strip("/").split("/")
        if path == "/api/repos/create":
            payload = json.loads(body)
            state.create_payloads.append(payload)
            repo_id = f"{payload.get('organization') or state.user}/{payload['name']}"
            url = f"http://{self.headers['Host']}/datasets/{repo_id}"
            if repo_id in state.repos:
                self._reply(409, {"error": "You already created this dataset repo", "url": url})
                return
            repo_type = payload.get("type", "model")
            state.repos[repo_id] = StandInRepo(repo_id, repo_type, _visibility_is_private(payload))
            self._reply(200, {"url": url, "name": repo_id})
        elif len(parts) == 6 and parts[:2] == ["api", "datasets"] and parts[4] == "preupload":
            if self._repo(parts) is not None:
                files = json.loads(body)["files"]
                modes = [
                    {"path": item["path"], "uploadMode": "regular", "shouldIgnore": False}
                    for item in files
                ]
                self._reply(200, {"files": modes})
        elif len(parts) == 6 and parts[:2] == ["api", "datasets"] and parts[4] == "commit":
            repo = self._repo(parts)
            if repo is None:
                return
            for line in body.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "header":
                    repo.commits.append(item["value"]["summary"])
                elif item["key"] == "file":
                    value = item["value"]
                    repo.files[value["path"]] = base64.b64decode(value["content"])
            oid = f"{len(repo.commits):040x}"
            url = f"http://{self.headers['Host']}/datasets/{repo.repo_id}/commit/{oid}"
            self._reply(200, {"commitUrl": url, "commitOid": oid, "success": True})
        else:
            self._reply(404, {"error": f"stand-in Hub does not serve POST {path}"})


class _StandInServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: StandInHubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class StandInHub:
    """Start with ``with StandInHub(token=..., user=...) as hub:``; ``hub.endpoint`` is its URL."""

    def __init__(self, token: str = "hf_standin_token", user: str = "ana") -> None:
        self.state = StandInHubState(token=token, user=user)
        self._server = _StandInServer(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StandInHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
