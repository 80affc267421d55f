"""The runner: runs the rule registry over configs, checkpoints and trees, with the settings
from config files and the command line."""
