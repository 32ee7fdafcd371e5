FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml ./
COPY . .
RUN pip install --no-cache-dir .
# Forwarded headers (X-Forwarded-For/-Proto) are trusted only from these proxies (uvicorn reads the variable):
# set it to the load balancer's addresses or network; never "*" on a port clients can reach directly.
ENV SANDBOX=0 HOST=0.0.0.0 PORT=8000 FORWARDED_ALLOW_IPS=127.0.0.1
EXPOSE 8000
CMD ["python", "-m", "uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "4", "--lifespan", "on", "--timeout-keep-alive", "75", "--proxy-headers"]
