"""Prints a deployed stack's status, resource count and outputs; exits 1 unless the stack is
CREATE_COMPLETE or UPDATE_COMPLETE. Used by scripts/deploy-local.sh with the boto3 of
.venv/tools and the AWS_* settings of the local stack.

    python scripts/stack-summary.py [--outputs] STACK
        --outputs   also the outputs (deploy-local's quiet mode; sam deploy prints them otherwise)
"""
import sys

import boto3


def main(argv):
    outputs = "--outputs" in argv
    stack = [a for a in argv if not a.startswith("--")][0]
    cfn = boto3.client("cloudformation")
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    resources = cfn.describe_stack_resources(StackName=stack)["StackResources"]
    status = s["StackStatus"]
    print(f"[deploy-local] stack {stack}: {status}, {len(resources)} resources")
    if outputs:
        rows = sorted((o["OutputKey"], o["OutputValue"]) for o in s.get("Outputs", []))
        width = max((len(k) for k, _ in rows), default=0)
        for k, v in rows:
            print(f"  {k:<{width}}  {v}")
    return 0 if status in ("CREATE_COMPLETE", "UPDATE_COMPLETE") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
