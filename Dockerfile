# The image of web, worker, beat, migrate and the simulator (docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
# .dockerignore keeps the virtualenv, git history, databases and caches out.
COPY . .
# Static files once, at build (whitenoise serves them from STATIC_ROOT). DEBUG only for
# this command: it needs settings, not a secret or a database.
RUN DJANGO_DEBUG=true DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput -v 0 \
    && rm -f /tmp/build.sqlite3
# Bytecode at build: PYTHONDONTWRITEBYTECODE and a read-only /app mean a process would
# otherwise compile every module from source at each start (about 14 ms of a worker's
# first request went to compiling the URLconf's views alone).
RUN python -m compileall -q -j 0 manage.py reverie_ops canary routing openrouter core observability fake_openrouter ignore_client
# Never root: a fixed unprivileged user owning nothing but its home and /tmp (the
# processes write only there, e.g. PROMETHEUS_MULTIPROC_DIR).
RUN useradd --system --uid 10001 --create-home --home-dir /home/app app
USER app
EXPOSE 8000
