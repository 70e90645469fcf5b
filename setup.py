"""Build step of gpu-audit: compile the note's gettext catalogues (.po to .mo, with Babel) into the package."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LOCALE = Path(__file__).parent / "generator" / "render" / "locale"


class BuildWithCatalogues(build_py):
    """build_py that first compiles every generator/render/locale/LANG/LC_MESSAGES/messages.po beside it, so that
    wheels, plain and editable installs all carry the compiled catalogues (the .mo files are not in git)."""

    def run(self) -> None:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in sorted(LOCALE.glob("*/LC_MESSAGES/messages.po")):
            with po.open("rb") as source:
                catalog = read_po(source, locale=po.parents[1].name)
            with po.with_suffix(".mo").open("wb") as target:
                write_mo(target, catalog, use_fuzzy=False)
        super().run()


setup(cmdclass={"build_py": BuildWithCatalogues})
