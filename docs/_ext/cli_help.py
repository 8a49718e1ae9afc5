"""``ldpsim-commands``: the command table and every command's ``--help`` text, taken from the command
line's own parser at build time, so this page can never disagree with ``ldpsim``."""

from docutils import nodes
from docutils.parsers.rst import Directive


def _table(rows):
    table = nodes.table()
    group = nodes.tgroup(cols=2)
    table += group
    group += nodes.colspec(colwidth=25)
    group += nodes.colspec(colwidth=75)
    head = nodes.thead()
    body = nodes.tbody()
    group += head
    group += body
    for target, cells in ((head, [("command", False), ("what it does", False)]),) + tuple(
            (body, [(f"ldpsim {name}", True), (text, False)]) for name, text in rows):
        row = nodes.row()
        for text, literal in cells:
            entry = nodes.entry()
            entry += nodes.paragraph("", "", nodes.literal(text, text) if literal else nodes.Text(text))
            row += entry
        target += row
    return table


class Commands(Directive):
    """The table of commands (from ``COMMANDS``) followed by one section per command with its help."""

    def run(self):
        from ldpsim.scenarios.cli import COMMANDS, build_parser
        parser = build_parser("*")
        sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")
        out = [_table([(name, text) for name, (_, text) in COMMANDS.items()])]
        for name in COMMANDS:
            section = nodes.section(ids=[f"ldpsim-{name}"])
            section += nodes.title(text=f"ldpsim {name}")
            text = sub.choices[name].format_help()
            block = nodes.literal_block(text, text)
            block["language"] = "text"
            section += block
            out.append(section)
        return out


def setup(app):
    app.add_directive("ldpsim-commands", Commands)
    return {"parallel_read_safe": True}
