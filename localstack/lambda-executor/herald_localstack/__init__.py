"""LocalStack plugins for herald's Docker-free local stack (see lambda_executor)."""
