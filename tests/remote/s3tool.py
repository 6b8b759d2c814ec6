#!/usr/bin/python3
"""Uploads and listings on the test S3 server by an independent client (botocore), for tests to set up data and
check what feedline wrote.

  s3tool.py --servers DIR/servers.json mkbucket BUCKET
  s3tool.py --servers DIR/servers.json put BUCKET KEY FILE
  s3tool.py --servers DIR/servers.json putdir BUCKET PREFIX LOCALDIR    (KEY = PREFIX + path under LOCALDIR)
  s3tool.py --servers DIR/servers.json ls BUCKET [PREFIX]                (one "KEY SIZE" line per object)
  s3tool.py --servers DIR/servers.json rm BUCKET KEY
  s3tool.py --servers DIR/servers.json etag BUCKET KEY

Importable: client(servers) gives a botocore S3 client (path-style addressing) for a servers.json path, its
contents, or its "s3" part; put_dir(), list_keys() and make_bucket() take that client.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import botocore.session
from botocore.config import Config


def s3_info(servers):
    """The "s3" part of servers.json, from its path, its parsed contents or that part itself."""
    if isinstance(servers, (str, os.PathLike)):
        servers = json.loads(Path(servers).read_text())
    if "endpoint" in servers:
        return servers
    if "s3" not in servers:
        raise ValueError("servers.json has no S3 server: start servers.py with --s3")
    return servers["s3"]


def client(servers, endpoint=None):
    """A botocore S3 client with the test server's keys; endpoint overrides its URL (a fault proxy's, say)."""
    info = s3_info(servers)
    # Only the test server's settings: no profile or AWS file of the user's (or of a test that sets them for
    # feedline) has a say.
    session = botocore.session.Session(session_vars={"profile": (None, None, None, None),
                                                     "config_file": (None, None, os.devnull, None),
                                                     "credentials_file": (None, None, os.devnull, None)})
    config = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2, "mode": "standard"},
                    connect_timeout=10, read_timeout=120)
    return session.create_client("s3", endpoint_url=endpoint or info["endpoint"], region_name=info["region"],
                                 aws_access_key_id=info["access_key"], aws_secret_access_key=info["secret_key"],
                                 config=config)


def make_bucket(s3, bucket):
    """Creates the bucket; one that this user already owns is fine."""
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass


def put_file(s3, bucket, key, path):
    with open(path, "rb") as f:
        return s3.put_object(Bucket=bucket, Key=key, Body=f)["ETag"]


def put_dir(s3, bucket, prefix, local_dir):
    """Uploads every file under local_dir as prefix + its relative path ('/'-separated); the keys, sorted."""
    root = Path(local_dir)
    keys = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        key = prefix + path.relative_to(root).as_posix()
        put_file(s3, bucket, key, path)
        keys.append(key)
    return keys


def list_keys(s3, bucket, prefix=""):
    """[(key, size)] of every object under prefix, in key order."""
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += [(o["Key"], o["Size"]) for o in page.get("Contents", [])]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="Uploads and listings on the test S3 server.")
    parser.add_argument("--servers", required=True, help="servers.json written by servers.py")
    parser.add_argument("--endpoint", help="another URL for the same server (a fault proxy's)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("mkbucket").add_argument("bucket")
    p = sub.add_parser("put")
    p.add_argument("bucket"), p.add_argument("key"), p.add_argument("file")
    p = sub.add_parser("putdir")
    p.add_argument("bucket"), p.add_argument("prefix"), p.add_argument("local_dir")
    p = sub.add_parser("ls")
    p.add_argument("bucket"), p.add_argument("prefix", nargs="?", default="")
    p = sub.add_parser("rm")
    p.add_argument("bucket"), p.add_argument("key")
    p = sub.add_parser("etag")
    p.add_argument("bucket"), p.add_argument("key")
    args = parser.parse_args(argv)

    s3 = client(args.servers, args.endpoint)
    try:
        if args.command == "mkbucket":
            make_bucket(s3, args.bucket)
        elif args.command == "put":
            print(put_file(s3, args.bucket, args.key, args.file))
        elif args.command == "putdir":
            for key in put_dir(s3, args.bucket, args.prefix, args.local_dir):
                print(key)
        elif args.command == "ls":
            for key, size in list_keys(s3, args.bucket, args.prefix):
                print(f"{key} {size}")
        elif args.command == "rm":
            s3.delete_object(Bucket=args.bucket, Key=args.key)
        elif args.command == "etag":
            print(s3.head_object(Bucket=args.bucket, Key=args.key)["ETag"])
    except s3.exceptions.ClientError as e:
        print(f"s3tool {args.command}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"s3tool {args.command}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
