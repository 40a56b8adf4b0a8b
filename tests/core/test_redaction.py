"""One redactor (core/redaction.py) for both places a request is written down: the request
as shown and logged (`ModelRequest.to_dict()`) and every session record. Both protect the
union of what the two former redactors did."""

from __future__ import annotations

from typing import Any

import pytest

from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.redaction import REDACTED, is_secret_name, redact_secrets


@pytest.mark.parametrize(
    "name",
    [
        # the request redactor's names, any case or dash
        "api_key",
        "Authorization",
        "x-api-key",
        "API-KEY",
        "token",
        "secret",
        # the session redactor's names and endings
        "X-Goog-Api-Key",
        "Proxy-Authorization",
        "cookie",
        "Set-Cookie",
        "password",
        "aws_secret_access_key",
        "openai_api_key",
        "client_secret",
        "github_access_token",
        "db_password",
        " Access-Token ",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["api_base", "model", "tokens", "max_tokens", "secretary", "content", "", 3, None]
)
def test_names_that_are_not_secret(name: Any) -> None:
    assert not is_secret_name(name)


def test_values_are_replaced_by_name_never_by_content() -> None:
    value = {
        "api_key": "sk-1",
        "nested": [{"Authorization": "Bearer t"}, ("Cookie", "c=1"), ["Accept", "json"]],
        "content": "my api_key is sk-1",  # what someone typed stays as typed
        "token": "",  # an empty value shows that none was set
        "secret": None,
    }
    assert redact_secrets(value) == {
        "api_key": REDACTED,
        "nested": [{"Authorization": REDACTED}, ["Cookie", REDACTED], ["Accept", "json"]],
        "content": "my api_key is sk-1",
        "token": "",
        "secret": None,
    }
    assert value["api_key"] == "sk-1"  # a copy; the original is untouched


def test_a_request_as_logged_hides_every_kind_of_secret() -> None:
    request = ModelRequest(
        model="openai/gpt-4.1",
        messages=({"role": "user", "content": "token: abc, keep it"},),
        extra={
            "api_key": "sk-live",
            "openai_api_key": "sk-other",
            "extra_headers": {"X-Goog-Api-Key": "g", "Accept": "json"},
            "headers": [["Proxy-Authorization", "Basic z"]],
            "timeout": 30,
        },
    )
    shown = request.to_dict()
    assert shown["api_key"] == REDACTED
    assert shown["openai_api_key"] == REDACTED  # once only the session redactor knew this
    assert shown["extra_headers"] == {"X-Goog-Api-Key": REDACTED, "Accept": "json"}
    assert shown["headers"] == [["Proxy-Authorization", REDACTED]]
    assert shown["timeout"] == 30
    assert shown["messages"] == [{"role": "user", "content": "token: abc, keep it"}]
    # the call itself still gets the real values
    assert request.params()["api_key"] == "sk-live"
