"""A kit server with MCP App tools and ``ui://`` resources, for the MCP-EXT and MCP-APPS tests.

Usage::

    python -m llm_mcp_tests.support.servers.apps [--http PORT] [--era modern|handshake|auto]
        [--context record=/path/to/file.jsonl] [--context connect=http://127.0.0.1:PORT]

With ``record=PATH`` every ``tools/call`` is appended to PATH as one JSON line ``{"tool",
"arguments", "capabilities"}``, so a test can tell that a request never reached the server.
``connect=ORIGIN`` is the one domain the forecast App's CSP declares (``connectDomains``).

Tools:

* ``forecast(city)``: an App tool (``ui://weather/forecast``, visibility left to its default);
  answers ``{"city", "reading"}`` as structured content and text.
* ``refresh(city)``: app-only (``visibility=["app"]``): a new reading, counted per process.
* ``model_only(city)``: an App tool the model may call but its App may not (``["model"]``).
* ``failing_forecast()``: an App tool whose result has ``isError``.
* ``broken_forecast()``: an App tool whose call fails with a JSON-RPC error (-32603).
* ``legacy_forecast()``: names its UI with the deprecated flat ``_meta["ui/resourceUri"]``.
* ``plain()``: no UI.
* ``capabilities()``: the client capabilities the server received, as JSON.

Resources: ``ui://weather/forecast`` (the App's HTML, ``_meta.ui`` on the content item:
``csp``, ``permissions``, ``prefersBorder``) and ``ui://weather/listed`` (``_meta.ui`` on the
listing entry only).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from llm_mcp.client.extensions import APP_MIME_TYPE
from llm_mcp.testing import Resource, Server, Tool, resource_contents

FORECAST_URI = "ui://weather/forecast"
LISTED_URI = "ui://weather/listed"
CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
_readings = itertools.count(1)

APP_HTML = (Path(__file__).with_name("forecast_app.html")).read_text(encoding="utf-8")


def forecast_ui(context: dict[str, Any]) -> dict[str, Any]:
    """The forecast App's ``_meta.ui``: its CSP names only the ``connect`` origin of the context."""
    connect = context.get("connect") or "https://api.weather.example"
    return {"csp": {"connectDomains": [connect], "resourceDomains": []},
            "permissions": {"clipboardWrite": {}}, "prefersBorder": True}


class Recording(Tool):
    input_schema = CITY

    def record(self) -> None:
        path = self.context.get("record")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"tool": self.name, "arguments": self.arguments,
                                         "capabilities": self.client_capabilities}) + "\n")

    def reading(self) -> dict[str, Any]:
        self.record()
        return self.respond_with(structured_content={"city": self.arguments.get("city") or "Oslo",
                                                     "reading": next(_readings)})


class Forecast(Recording):
    name = "forecast"
    description = "The forecast for a city, shown in an App."
    resource_uri = FORECAST_URI

    def call(self) -> Any:
        return self.reading()


class Refresh(Recording):
    name = "refresh"
    description = "A fresh reading; only the forecast App calls it."
    resource_uri = FORECAST_URI
    visibility = ["app"]

    def call(self) -> Any:
        return self.reading()


class ModelOnly(Recording):
    name = "model_only"
    description = "The model may call it; the App may not."
    resource_uri = FORECAST_URI
    visibility = ["model"]

    def call(self) -> Any:
        return self.reading()


class FailingForecast(Recording):
    name = "failing_forecast"
    resource_uri = FORECAST_URI

    def call(self) -> Any:
        self.record()
        return self.respond_with(error="no forecast today", meta={"io.example/trace": "t-1"})


class BrokenForecast(Recording):
    name = "broken_forecast"
    resource_uri = FORECAST_URI

    def call(self) -> Any:
        self.record()
        return self.respond_with()  # no answer: the server answers JSON-RPC -32603


class LegacyForecast(Recording):
    name = "legacy_forecast"
    meta = {"ui/resourceUri": LISTED_URI}

    def call(self) -> Any:
        return self.reading()


class Plain(Recording):
    name = "plain"

    def call(self) -> Any:
        self.record()
        return "plain text"


class Capabilities(Recording):
    name = "capabilities"

    def call(self) -> Any:
        return json.dumps(self.client_capabilities, sort_keys=True)


class ForecastApp(Resource):
    uri = FORECAST_URI
    name = "forecast_app"
    mime_type = APP_MIME_TYPE

    def read(self) -> Any:
        return [resource_contents(uri=FORECAST_URI, text=APP_HTML, mime_type=APP_MIME_TYPE,
                                       meta={"ui": forecast_ui(self.context)})]


class ListedApp(Resource):
    uri = LISTED_URI
    name = "listed_app"
    mime_type = APP_MIME_TYPE
    meta = {"ui": {"prefersBorder": False, "domain": "listed.example"}}

    def read(self) -> Any:  # a list of contents: no _meta on the item, only on the listing
        return [resource_contents(uri=LISTED_URI, text="<p>listed</p>", mime_type=APP_MIME_TYPE)]


server = Server("apps", tools=[Forecast, Refresh, ModelOnly, FailingForecast, BrokenForecast, LegacyForecast, Plain, Capabilities],
                resources=[ForecastApp, ListedApp])

if __name__ == "__main__":
    server.serve()
