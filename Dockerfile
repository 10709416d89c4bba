# One image for every role of the deployment (migrate, api, worker, beat).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY auditor ./auditor
COPY workers ./workers
COPY migrations ./migrations
RUN pip install -e . && useradd --system --uid 10001 auditor
USER auditor

EXPOSE 8000
CMD ["auditor", "serve", "--host", "0.0.0.0", "--port", "8000"]
