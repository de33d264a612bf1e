import sys

from arl_envhost.server import main

if __name__ == "__main__":
    sys.exit(main())
