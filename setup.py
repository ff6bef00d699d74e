"""Packaging that reads settings.ini (nbdev's single source of metadata)."""
from configparser import ConfigParser

import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

requirements = cfg.get("requirements", "").split()
extras = {}
for key, value in cfg.items():
    if key.endswith("_requirements") and key not in ("dev_requirements",):
        # extras are spelled with hyphens (pip before 23.3 does not match an underscore spelling)
        extras[key[: -len("_requirements")].replace("_", "-")] = value.split()
extras["dev"] = cfg.get("dev_requirements", "").split()
extras["all"] = sorted({r for k, v in extras.items() if k != "dev" for r in v})

licenses = {"apache2": "Apache-2.0"}  # SPDX

setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license=licenses[cfg["license"]],
    url=cfg["git_url"],
    keywords=cfg["keywords"].split(),
    classifiers=[f"Development Status :: {cfg['status']} - Alpha",
                 f"Intended Audience :: {cfg['audience']}",
                 f"Natural Language :: {cfg['language']}",
                 "Programming Language :: Python :: 3",
                 *[f"Programming Language :: Python :: 3.{m}" for m in range(10, 14)]],
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]),
    include_package_data=True,
    python_requires=">=" + cfg["min_python"],
    install_requires=requirements,
    extras_require=extras,
    zip_safe=False,
)
