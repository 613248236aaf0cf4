"""``tdbsql group``: list, make and change TileDB groups.

    tdbsql group ./tpch                             # members (name, kind, path) and metadata
    tdbsql group ./tpch --create
    tdbsql group ./tpch --add ./tpch/lineitem [--name lineitem]
    tdbsql group ./tpch --remove lineitem

A group's arrays are tables in SQL: ``tdbsql query "SELECT ... FROM lineitem" ./tpch``.
"""

from __future__ import annotations


def add_command(subparsers) -> None:
    p = subparsers.add_parser("group", help="list, create or change a TileDB group",
                              epilog="example: tdbsql group ./tpch --add ./tpch/lineitem")
    p.add_argument("path")
    change = p.add_mutually_exclusive_group()
    change.add_argument("--create", action="store_true", help="create an empty group at PATH")
    change.add_argument("--add", metavar="URI", help="add the array or group at URI")
    change.add_argument("--remove", metavar="NAME_OR_URI", help="remove a member")
    p.add_argument("--name", help="with --add: the member's name (its table name in SQL)")
    p.set_defaults(handler=run)


def run(args, key) -> None:
    import tdbsql

    if args.name is not None and args.add is None:
        raise tdbsql.ProgrammingError("--name goes with --add")
    if key is not None:
        raise tdbsql.ProgrammingError("groups are not encrypted: leave out --key")
    if args.create:
        tdbsql.create_group(args.path)
    elif args.add is not None:
        tdbsql.add_member(args.path, args.add, name=args.name)
    elif args.remove is not None:
        tdbsql.remove_member(args.path, args.remove)
    else:
        _show(tdbsql.open_group(args.path))


def _show(group) -> None:
    kinds = {1: "group", 2: "array"}
    rows = [(m.name or "", kinds[m.kind], path) for m, path in group.members]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in
              enumerate(("name", "kind", "path"))]
    for row in [("name", "kind", "path"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    tables = group.tables()
    print(f"tables: {', '.join(tables) if tables else '(none)'}")
    for name, value in group.metadata().items():
        print(f"metadata {name}: {value!r}")
