"""The reference ``load.py`` measures beside the service: FastAPI on uvicorn answering the
same routes with no work behind them (the JSON body parsed, a one-pick answer, nothing
stored). Its rate is what the framework, the server and the client cost on this machine, the
ceiling any FastAPI service could reach here.

    uvicorn --factory _floor_app:create_app --workers 2
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

__all__ = ["create_app"]

PICK = {"instance_type": "floor", "cost_usd": 0.0}


def create_app() -> FastAPI:
    app = FastAPI()

    @app.get("/readyz")
    def ready() -> dict[str, str]:
        return {"status": "ready"}

    @app.post("/v1/recommendations", status_code=201)
    async def recommend(request: Request) -> dict[str, Any]:
        body = await request.json()
        return {"workload": body.get("name"), "picks": [PICK]}

    @app.post("/v1/profiles", status_code=201)
    async def upload(request: Request) -> Response:
        await request.body()
        return JSONResponse({"id": 0}, status_code=201)

    @app.get("/v1/profiles")
    def listed() -> dict[str, int]:
        return {"total": 0}

    return app
