"""``--upload``: the written traces to the user's own dataset ``<user>/hermes-traces``.

The dataset is created **private** unless ``public`` is asked for, and an existing public
dataset is refused without it, so private traces never land in public by accident. The token
comes from ``HF_TOKEN``, the Hub address from ``HF_ENDPOINT`` (as huggingface_hub itself does).
huggingface_hub is imported here, lazily: it is only needed with ``--upload``
(``pip install 'hermes-export-trace[upload]'``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_hookspecs import UserFacingError

DATASET_NAME = "hermes-traces"
INSTALL_HINT = "pip install 'hermes-export-trace[upload]'"
FILES_PER_COMMIT = 100


class TraceUploadError(UserFacingError):
    """An upload that could not happen; the message is one line meant for the user (the core
    shows a :class:`~hermes_hookspecs.UserFacingError` as ``hermes: …``, never a traceback)."""


@dataclass(frozen=True, slots=True)
class UploadedTraces:
    """Where the traces went."""

    repo_id: str
    url: str
    private: bool
    paths: tuple[str, ...]


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text[:300] if text else type(error).__name__


class HubUploader:
    """A connection to the Hub prepared before anything is written.

    Building one checks what can be checked locally (a token in ``HF_TOKEN``, huggingface_hub
    installed), so an export that cannot be uploaded stops before it writes a file.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        environment = os.environ if env is None else env
        token = environment.get("HF_TOKEN", "").strip()
        if not token:
            raise TraceUploadError(
                "--upload needs a Hugging Face token with write access in HF_TOKEN "
                "(create one at https://huggingface.co/settings/tokens)"
            )
        try:
            import huggingface_hub
            from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]
        except ImportError:
            raise TraceUploadError(f"--upload needs huggingface_hub: {INSTALL_HINT}") from None
        disable_progress_bars()
        self._hub: Any = huggingface_hub
        self._api: Any = huggingface_hub.HfApi(
            endpoint=environment.get("HF_ENDPOINT") or None, token=token
        )

    def upload(self, files: Sequence[tuple[str, Path]], public: bool) -> UploadedTraces:
        """Upload ``files`` (path in the dataset, local file) to ``<user>/hermes-traces``.

        Raises :class:`TraceUploadError` (one line) when the Hub refuses the token or the
        upload, or when the dataset is public and ``public`` was not asked for.
        """
        api = self._api
        try:
            user = api.whoami()["name"]
        except Exception as error:  # the Hub's errors vary by version; each becomes one line
            raise TraceUploadError(
                f"Hugging Face did not accept HF_TOKEN: {_one_line(error)}"
            ) from None
        repo_id = f"{user}/{DATASET_NAME}"
        try:
            url = str(
                api.create_repo(repo_id, repo_type="dataset", private=not public, exist_ok=True)
            )
            is_private = bool(api.repo_info(repo_id, repo_type="dataset").private)
            if not is_private and not public:
                raise TraceUploadError(
                    f"the dataset {repo_id} is public; pass --public to upload to it anyway"
                )
            for start in range(0, len(files), FILES_PER_COMMIT):
                batch = files[start : start + FILES_PER_COMMIT]
                operations = [
                    self._hub.CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path))
                    for name, path in batch
                ]
                api.create_commit(
                    repo_id,
                    operations=operations,
                    repo_type="dataset",
                    commit_message=f"Add {len(batch)} Hermes session trace(s)",
                )
        except TraceUploadError:
            raise
        except Exception as error:
            raise TraceUploadError(f"upload to {repo_id} failed: {_one_line(error)}") from None
        return UploadedTraces(
            repo_id=repo_id, url=url, private=is_private, paths=tuple(name for name, _ in files)
        )
