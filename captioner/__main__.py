import sys

from captioner.cli import main

sys.exit(main())
