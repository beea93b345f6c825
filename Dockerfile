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
# Never root: a fixed unprivileged user owning nothing but its home and /tmp (the
# processes write only there, e.g. PROMETHEUS_MULTIPROC_DIR).
RUN useradd --system --uid 10001 --create-home --home-dir /home/app app
USER app
EXPOSE 8000
