"""Where an installed copy of the package finds the runtime library and the ortc command.

`cmake --install` puts the package at <prefix>/<libdir>/python3/site-packages/ortc, beside
<prefix>/<libdir>/libortc_runtime.so.0, with the command at <prefix>/bin/ortc. <libdir> is
"lib", or "lib/<multiarch>" where GNUInstallDirs picks a Debian multiarch folder (prefix /usr).
A copy used from elsewhere (a source tree on PYTHONPATH) has no such neighbours.
"""

import os

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def installed_libdir():
    """<prefix>/<libdir> of an installed copy, or None when the package is not in that layout."""
    site_dir = os.path.dirname(_PACKAGE_DIR)
    python_dir = os.path.dirname(site_dir)
    if os.path.basename(site_dir) != "site-packages" or os.path.basename(python_dir) != "python3":
        return None
    return os.path.dirname(python_dir)


def installed_prefix():
    """<prefix> of an installed copy, or None when the package is not in that layout."""
    libdir = installed_libdir()
    if libdir is None:
        return None
    parent = os.path.dirname(libdir)
    # lib/<multiarch>: the prefix is one folder further up.
    return os.path.dirname(parent) if os.path.basename(parent) == "lib" else parent
