print("yapdb")
