import sys

from arl_tracking.sidecar import main

if __name__ == "__main__":
    sys.exit(main())
