"""Files on disk: the control file, settings, runtime state, session logs and replay."""
